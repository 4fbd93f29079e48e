"""Pillow's side of magpie-proc-bench. Inputs and outputs are raw 8-bit pixel files, so both
sides work on exactly the same pixels and only the operation itself is timed.

  pillow_processing.py resize IN.raw W H MODE OUT_W OUT_H RUNS   -> median ms
  pillow_processing.py blur IN.raw W H MODE SIGMA RUNS           -> median ms
  pillow_processing.py lanczos IN.raw W H MODE OUT_W OUT_H OUT.raw  (one resize, written raw)
  pillow_processing.py gaussian IN.raw W H MODE SIGMA OUT.raw       (one blur, written raw)
MODE is RGB or RGBA (the file holds W*H*len(MODE) bytes).
"""
import statistics
import sys
import time

from PIL import Image, ImageFilter


def load(path, width, height, mode):
    with open(path, 'rb') as f:
        return Image.frombytes(mode, (int(width), int(height)), f.read())


def median_ms(operation, runs):
    for _ in range(2):
        operation()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        operation()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(argv):
    task = argv[1]
    image = load(argv[2], argv[3], argv[4], argv[5])
    if task == 'resize':
        size = (int(argv[6]), int(argv[7]))
        print('%f' % median_ms(lambda: image.resize(size, Image.LANCZOS), int(argv[8])))
    elif task == 'blur':
        blur = ImageFilter.GaussianBlur(float(argv[6]))
        print('%f' % median_ms(lambda: image.filter(blur), int(argv[7])))
    elif task == 'lanczos':
        out = image.resize((int(argv[6]), int(argv[7])), Image.LANCZOS)
        with open(argv[8], 'wb') as f:
            f.write(out.tobytes())
    elif task == 'gaussian':
        out = image.filter(ImageFilter.GaussianBlur(float(argv[6])))
        with open(argv[7], 'wb') as f:
            f.write(out.tobytes())
    else:
        sys.exit('unknown task ' + task)


if __name__ == '__main__':
    main(sys.argv)
