"""Pillow's side of magpie-bench's decode and thumbnail cells, and of scripts/bench-library's pinned rows.

  python pillow_codec.py TASK FILE RUNS     TASK: decode | thumb

Two warm-up runs, then RUNS timed ones; prints one JSON line: the median wall time and CPU time (this process,
user + system) of a run in ms, and the peak RSS in KiB. `decode` loads every pixel; `thumb` is draft + thumbnail
256×256 LANCZOS + JPEG q80 into memory, Pillow's own fast path for the same thumbnail magpie-bench-worker makes.
"""
import io
import json
import statistics
import sys
import time

from PIL import Image

task, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, 'rb').read()


def run():
    im = Image.open(io.BytesIO(data))
    if task == 'decode':
        im.load()
    else:
        im.draft('RGB', (256, 256))
        im.thumbnail((256, 256), Image.LANCZOS)
        if im.mode not in ('RGB', 'L'):
            im = im.convert('RGB')
        im.save(io.BytesIO(), 'JPEG', quality=80)


for _ in range(2):
    run()
times, cpu = [], []
for _ in range(runs):
    wall, used = time.perf_counter(), time.process_time()
    run()
    times.append((time.perf_counter() - wall) * 1000)
    cpu.append((time.process_time() - used) * 1000)
# VmHWM, not ru_maxrss: after fork+exec ru_maxrss still holds the parent's high-water mark.
hwm = int([line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')][0])
print(json.dumps({'medianMs': statistics.median(times), 'medianCpuMs': statistics.median(cpu), 'peakRSSKiB': hwm}))
