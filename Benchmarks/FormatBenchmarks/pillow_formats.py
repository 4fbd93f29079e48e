# The Pillow cells of magpie-format-bench: one task on one file in this process, median time and peak RSS as JSON.
#   python pillow_formats.py TASK FILE RUNS [QUALITY SPEED]
# TASK: decode (Image.open + load), thumb (thumbnail 256 LANCZOS + JPEG q80 into memory, as magpie-bench's thumb),
# encode-avif (FILE decoded once, untimed; save(format="AVIF", quality=, speed=, subsampling="4:2:0", Pillow's default) into
# memory; prints outputBytes).
# HEIC needs pillow-heif: its opener is registered when the module imports (and it must, for a .heic FILE).
# Each library keeps its default threading (Pillow's AVIF: libavif's max_threads; pillow-heif: its DECODE_THREADS).
import io
import statistics
import sys
import time

from PIL import Image

task, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
if path.lower().endswith(('.heic', '.heif')):
    import pillow_heif
    pillow_heif.register_heif_opener()
data = open(path, 'rb').read()
out_bytes = None

if task == 'encode-avif':
    quality, speed = int(sys.argv[4]), int(sys.argv[5])
    source = Image.open(io.BytesIO(data))
    source.load()
    if source.mode not in ('RGB', 'RGBA'):
        source = source.convert('RGB')


def run():
    global out_bytes
    if task == 'encode-avif':
        buf = io.BytesIO()
        source.save(buf, format='AVIF', quality=quality, speed=speed, subsampling='4:2:0')
        out_bytes = buf.tell()
        return
    im = Image.open(io.BytesIO(data))
    if task == 'decode':
        im.load()
    elif task == 'thumb':
        im.draft('RGB', (256, 256))
        im.thumbnail((256, 256), Image.LANCZOS)
        if im.mode not in ('RGB', 'L'):
            im = im.convert('RGB')
        im.save(io.BytesIO(), 'JPEG', quality=80)
    else:
        sys.exit(f'unknown task {task}')


for _ in range(2):
    run()
times = []
for _ in range(runs):
    t = time.perf_counter()
    run()
    times.append((time.perf_counter() - t) * 1000)
# VmHWM, not ru_maxrss: after fork+exec ru_maxrss still holds the parent's high-water mark.
hwm = int([line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')][0])
extra = '' if out_bytes is None else ', "outputBytes": %d' % out_bytes
print('{"medianMs": %f, "peakRSSKiB": %d%s}' % (statistics.median(times), hwm, extra))
