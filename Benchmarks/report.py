#!/usr/bin/env python3
"""Renders what the benchmark binaries append to $MAGPIE_BENCH_RATIOS (python3 standard library only).

  report.py chart RATIOS.tsv OUT.svg   bar chart of Magpie time / peer time (memory section: peak RSS), by section
  report.py targets RATIOS.tsv         Markdown table of the targets of waves 1 and 2, met / not met / not measured
  report.py unmet RATIOS.tsv           Markdown list of the targets not met in that run, each with its reason from
                                       reasons.tsv beside this file (KEY, tab, reason; '#' lines are comments)
  report.py compare EARLIER.tsv LATER.tsv   Markdown table of every target's rows in two runs side by side, with
                                       whether the verdicts agree (scripts/bench: this run against the one before)

RATIOS.tsv lines (tab-separated), written by Benchmarks/Support/BenchLog.swift and scripts/bench_serve/bench_log.py:
  SECTION  LABEL  RATIO  NOTE                         a chart bar (RATIO = Magpie time / peer time)
  target   KEY    SUBJECT  MEASURED  LIMIT  VERDICT   a target verdict (VERDICT: met | not met | noisy: pairs that
                                                    disagreed, no verdict)
"""
import math
import os
import sys
from xml.sax.saxutils import escape

SECTIONS = ['decode', 'thumbnail', 'formats', 'colour', 'processing', 'cache', 'network', 'prefetch', 'server', 'cluster',
            'memory']
SECTION_TITLES = {
    'decode': 'Decode (full, to RGBA)',
    'thumbnail': 'Thumbnail (decode → fit 256 → JPEG q80)',
    'formats': 'Formats (wave 2: AVIF, HEIC, JPEG XL, TIFF)',
    'colour': 'Colour (decode + sRGB ÷ plain decode)',
    'processing': 'Processing',
    'cache': 'Cache (Magpie vs raw baselines and NSCache)',
    'network': 'Network (1,000 × ~50 KB over loopback, 16 at once)',
    'prefetch': 'Prefetch (1,000 images, resize 256, disk cache)',
    'server': 'Image server (time per request: peer req/s ÷ magpie serve req/s)',
    'cluster': 'Cluster (time per request: one instance direct ÷ behind nginx)',
    'memory': 'Memory (peak RSS, Magpie ÷ peer)',
}

# The targets of waves 1 and 2 that a benchmark measures, in the order the report lists them: key, part (W1 P1 = wave 1
# part 1), what is promised, and what to say when no benchmark in this run measured it. Wave 2 part 7 repeats W1 P1's
# and W1 P3's targets and part 5's, so it has no rows of its own.
TARGETS = [
    # The library rows marked "pinned" are scripts/bench-library's (wave 3 part 4): one core, alternated pairs, judged
    # on CPU time per item (the download and the hit rate on wall time); "noisy" when the pairs disagree by 10 %
    # (magpie_scripts.pairs: two more pairs when the first disagree, the ends left out from five pairs on).
    ('p1-jpeg-thumb', 'W1 P1', '13–15 MP baseline JPEG → 256 px JPEG: time ≤ 0.8× Pillow (pinned, CPU per item)',
     'scripts/bench-library did not run its thumb row, or Pillow missing'),
    ('p1-jpeg-thumb-rss', 'W1 P1', 'the same thumbnail: peak RSS ≤ 25 MB', 'no 13–15 MP baseline JPEG among the inputs'),
    ('p1-progressive-decode', 'W1 P1', '18 MP progressive JPEG decode within 1.05× djpeg',
     'J1_Elephants_5640x3172.jpg absent (scripts/bench --fetch), or djpeg missing'),
    ('p1-png-decode', 'W1 P1', '15 MP PNG decode no slower than Pillow (pinned, CPU per item)',
     'scripts/bench-library did not run its png row, or Pillow missing'),
    ('p2-memory-hit', 'W1 P2', 'memory-cache hit ≤ 3× Dictionary + Mutex', 'magpie-cache-bench did not run'),
    ('p2-disk-hit', 'W1 P2', 'disk-cache hit (retrieveImage) ≤ 1.1× raw decode (pinned, CPU per item)',
     'scripts/bench-library did not run its disk row'),
    ('p2-open', 'W1 P2', 'open a disk cache of 100,000 entries in < 1 s', 'magpie-cache-bench ran with fewer than 100,000 entries'),
    ('p3-network', 'W1 P3', 'download throughput ≥ curl --parallel (pinned: client and curl on one core, nginx on the other)',
     'curl or nginx missing, or scripts/bench-library did not run its download row'),
    ('p3-dedupe', 'W1 P3', 'identical concurrent requests → 1 request at the origin', 'the network bench did not run'),
    ('p4-manager-hit', 'W1 P4', 'manager memory hit ≤ 3× raw memory lookup (pinned, CPU per hit)',
     'scripts/bench-library did not run its manager row'),
    ('p4-manager-rate', 'W1 P4', 'manager memory hits ≥ 1 M/s (pinned, one task)', 'scripts/bench-library did not run its manager row'),
    ('p4-resize', 'W1 P4', 'resize 15 MP → 256 ≤ 1.0× Pillow', 'Pillow missing'),
    ('p4-blur', 'W1 P4', 'Gaussian blur on 2 MP ≤ 1.0× Pillow', 'Pillow missing'),
    ('p4-resize-psnr', 'W1 P4', 'resize PSNR ≥ 35 dB against Pillow LANCZOS', 'Pillow missing, or no JPEG in the corpus'),
    ('thumb-worker-rss', 'W2 P1', 'thumbnail worker peak RSS: SafeLanding_5120x2880.jpg → 256 px JPEG, Magpie ≤ 22 MB (Pillow alongside)',
     'SafeLanding_5120x2880.jpg not among the inputs, or magpie-bench did not run'),
    ('w2-avif-decode', 'W2 P3', 'AVIF decode (13 MP phone photo) ≤ 1.0× the best peer (Pillow, avifdec)',
     'Magpie has no AVIF decoder in this build, or no peer installed'),
    ('w2-heic-decode', 'W2 P3', 'HEIC decode (4032×3024 iPhone grid) ≤ 1.0× the best peer (pillow-heif, heif-convert)',
     'Magpie has no HEIC decoder in this build, or no peer installed'),
    ('w2-jxl-decode', 'W2 P3', 'JPEG XL decode (13 MP lossy) ≤ 1.0× djxl', 'Magpie has no JPEG XL decoder in this build, or djxl missing'),
    ('w2-tiff-decode', 'W2 P3', 'TIFF decode (13 MP deflate RGB) ≤ 1.0× Pillow', 'Magpie has no TIFF decoder in this build, or Pillow missing'),
    ('w2-srgb', 'W2 P3', 'decode with sRGB conversion (13 MP Display P3 JPEG) adds ≤ 15 % to the plain decode',
     'the formats section did not run'),
    ('w2p4-large-body', 'W2 P4', 'a body past 4 MiB is spooled to disk: anonymous memory stays within the decoded image '
     '(if any) + the idle process + 4 MiB', 'magpie-http-bench did not run'),
    ('w2p4-resume', 'W2 P4', 'a resumed download transfers only the missing bytes (origin byte count)', 'magpie-http-bench did not run'),
    ('w2p4-swr', 'W2 P4', 'stale-while-revalidate answers before the slow origin does', 'magpie-http-bench did not run'),
    # Wave 3 part 4: the serve cells pinned (server alone on one core, wrk and the origin on the other) and run as
    # alternated pairs; a verdict only when the pairs agree within 10 % (as above), "noisy" otherwise.
    ('w3p4-cold-jpeg', 'W3 P4', 'magpie serve, cold JPEG (a new 2K source per request → 512 px), per core: req/s ≥ 2× thumbor',
     'scripts/bench-serve did not run (--skip-serve), or thumbor missing'),
    ('w3p4-cold-webp-avif', 'W3 P4', 'magpie serve, cold WebP and AVIF, per core: req/s ≥ 1.3× thumbor',
     'scripts/bench-serve did not run (--skip-serve), or thumbor missing'),
    ('w3p4-cached-cpu', 'W3 P4', "magpie serve, cached results: CPU per answer ≤ 2× nginx's (sendfile), req/s ratio beside",
     'scripts/bench-serve did not run (--skip-serve)'),
    ('w3p4-anon', 'W3 P4', "magpie serve peak anonymous memory at 8 concurrent cold requests ≤ 0.75× thumbor's",
     'scripts/bench-serve did not run (--skip-serve), or thumbor missing'),
    ('w3p4-soak-rss', 'W3 P4', 'magpie serve under mixed load: RSS over the 10th minute within 10 % of the 2nd (medians of a minute)',
     'the soak did not run (--skip-serve, or --serve-soak-minutes 0)'),
    ('w2p6-errors', 'W2 P6', 'cluster behind nginx (1, 2, 4 instances, and one asked directly), cold and cached under wrk: '
     'every request answered 2xx', 'scripts/bench-cluster did not run (--skip-cluster)'),
]


def read_rows(path):
    bars, targets = [], []
    with open(path, encoding='utf-8') as f:
        for line in f:
            fields = line.rstrip('\n').split('\t')
            if fields[0] == 'target' and len(fields) >= 6:
                targets.append(fields[1:6])
            elif len(fields) >= 3 and fields[0] in SECTIONS:
                try:
                    value = float(fields[2])
                except ValueError:
                    continue
                if value > 0 and math.isfinite(value):
                    bars.append((fields[0], fields[1], value, fields[3] if len(fields) > 3 else ''))
    return bars, targets


def targets_table(path):
    _, rows = read_rows(path)
    by_key = {}
    for key, subject, measured, limit, verdict in rows:
        by_key.setdefault(key, []).append((subject, measured, limit, verdict))
    out = ['| part | target | measured on | measured | limit | verdict |', '|---|---|---|---:|---|---|']
    met = missed = unmeasured = 0
    for key, part, promise, absent in TARGETS:
        found = by_key.pop(key, [])
        if not found:
            unmeasured += 1
            out.append(f'| {part} | {promise} | {absent} | – | – | not measured |')
        for subject, measured, limit, verdict in found:
            if verdict == 'met':
                met += 1
            else:
                missed += 1
            cell = verdict if verdict in ('met', 'noisy') else '**not met**'
            out.append(f'| {part} | {promise} | {subject} | {measured} | {limit} | {cell} |')
    for key, found in by_key.items():  # a key a bench writes that TARGETS does not list yet
        for subject, measured, limit, verdict in found:
            met, missed = (met + 1, missed) if verdict == 'met' else (met, missed + 1)
            out.append(f'| ? | {key} | {subject} | {measured} | {limit} | {verdict} |')
    summary = f'{met} met, {missed} not met, {unmeasured} not measured (each row one measurement; a target may have several).'
    return '\n'.join(out) + '\n\n' + summary


REASONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'reasons.tsv')


def read_reasons(path=REASONS):
    reasons = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.strip() and not line.startswith('#'):
                key, _, reason = line.rstrip('\n').partition('\t')
                reasons[key.strip()] = reason.strip()
    return reasons


def unmet_list(path):
    """One bullet per target with a row not met in this run: its measurements and the recorded reason. A met target
    never appears; a not-met one without a reason says so, so that a new gap is seen rather than hidden."""
    _, rows = read_rows(path)
    missed, measured_keys = {}, set()
    for key, subject, measured, limit, verdict in rows:
        measured_keys.add(key)
        if verdict != 'met':
            missed.setdefault(key, []).append(f'{subject}: {measured} (limit {limit})')
    reasons = read_reasons()
    listed = [(key, part, promise) for key, part, promise, _ in TARGETS]
    listed += [(key, '?', key) for key in missed if key not in {k for k, *_ in TARGETS}]
    out = [f'- **{part} · {promise}.** Not met (or noisy) on {"; ".join(missed[key])}. '
           f'*Why:* {reasons.get(key) or "no reason recorded yet."}' for key, part, promise in listed if key in missed]
    if not out:
        out.append('Every target measured in this run is met.')
    unmeasured = [f'{part} · {promise}' for key, part, promise, _ in TARGETS if key not in measured_keys]
    if unmeasured:
        out.append(f'\nNot measured in this run (the targets table says why): {"; ".join(unmeasured)}.')
    return '\n'.join(out)


def compare_table(earlier_path, later_path):
    """Every target row of two runs side by side, matched by key and order within the key (a bench writes a key's
    rows in the same order each run), with whether the two verdicts agree."""
    runs = []
    for path in (earlier_path, later_path):
        _, rows = read_rows(path)
        by_key = {}
        for key, subject, measured, limit, verdict in rows:
            by_key.setdefault(key, []).append((subject, measured, limit, verdict))
        runs.append(by_key)
    out = ['| part | target | row | earlier run | this run | same verdict |', '|---|---|---|---|---|---|']
    agree = differ = 0
    keys = [(key, part, promise) for key, part, promise, _ in TARGETS]
    keys += [(key, '?', key) for key in list(runs[0]) + list(runs[1]) if key not in {k for k, *_ in TARGETS}]
    seen = set()
    for key, part, promise in keys:
        if key in seen:
            continue
        seen.add(key)
        earlier, later = runs[0].get(key, []), runs[1].get(key, [])
        for index in range(max(len(earlier), len(later))):
            a = earlier[index] if index < len(earlier) else None
            b = later[index] if index < len(later) else None
            cell = lambda row: f'{row[1]} ({row[3]})' if row else 'not measured'
            same = bool(a and b and a[3] == b[3])
            agree, differ = (agree + 1, differ) if same else (agree, differ + 1)
            subject = (b or a)[0]
            out.append(f'| {part} | {promise} | {subject} | {cell(a)} | {cell(b)} | {"yes" if same else "**no**"} |')
    summary = f'Target rows: {agree} with the same verdict in both runs, {differ} with another (or measured in one run only).'
    return '\n'.join(out) + '\n\n' + summary


def nice_ticks(lo, hi):
    ticks = []
    for exponent in range(-3, 4):
        for mantissa in (1, 2, 5):
            ticks.append(mantissa * 10 ** exponent)
    low = max(t for t in ticks if t <= lo) if lo >= ticks[0] else ticks[0]
    high = min(t for t in ticks if t >= hi) if hi <= ticks[-1] else ticks[-1]
    return low, high, [t for t in ticks if low <= t <= high]


def tick_text(t):
    return f'{t:g}×'


def chart(path, out_path):
    bars, _ = read_rows(path)
    grouped = [(s, [b for b in bars if b[0] == s]) for s in SECTIONS]
    grouped = [(s, rows) for s, rows in grouped if rows]
    values = [b[2] for b in bars] or [1.0]
    low, high, ticks = nice_ticks(min(min(values), 0.5), max(max(values), 2.0))
    label_right, plot_left, plot_right, width = 392, 440, 890, 960
    row_h, head_h, top = 18, 28, 100

    def x(v):
        v = min(max(v, low), high)
        return plot_left + (math.log(v) - math.log(low)) / (math.log(high) - math.log(low)) * (plot_right - plot_left)

    height = top + sum(head_h + row_h * len(rows) for _, rows in grouped) + 46
    font = 'font-family="DejaVu Sans, Verdana, Arial, sans-serif"'
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" {font} font-size="12">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           '<text x="16" y="26" font-size="17" font-weight="bold" fill="#222">Magpie time ÷ peer time, per task (log scale)</text>',
           '<text x="16" y="46" fill="#555">Below 1× (green, left of the line) Magpie is faster than the peer (memory section: smaller); above 1× (red) it is slower (larger).</text>',
           '<text x="16" y="62" fill="#555">Blue: against a raw floor or a reference that does less work (the overhead Magpie adds; see the targets table).</text>']
    axis_y = top - 12
    for t in ticks:
        tx = x(t)
        svg.append(f'<line x1="{tx:.1f}" y1="{axis_y}" x2="{tx:.1f}" y2="{height - 40}" stroke="{"#333" if t == 1 else "#e3e3e3"}" stroke-width="{1.5 if t == 1 else 1}"/>')
        svg.append(f'<text x="{tx:.1f}" y="{axis_y - 6}" text-anchor="middle" fill="#444">{tick_text(t)}</text>')
        svg.append(f'<text x="{tx:.1f}" y="{height - 24}" text-anchor="middle" fill="#444">{tick_text(t)}</text>')
    svg.append(f'<text x="{x(1) - 8:.1f}" y="{height - 8}" text-anchor="end" fill="#2e7d32">◀ Magpie faster</text>')
    svg.append(f'<text x="{x(1) + 8:.1f}" y="{height - 8}" fill="#c62828">Magpie slower ▶</text>')
    y = top
    for section, rows in grouped:
        svg.append(f'<line x1="16" y1="{y + 4}" x2="{width - 16}" y2="{y + 4}" stroke="#bbb"/>')
        svg.append(f'<text x="16" y="{y + 20}" font-size="13" font-weight="bold" fill="#222">{escape(SECTION_TITLES[section])}</text>')
        y += head_h
        for _, label, value, note in rows:
            mid = y + row_h / 2
            start, end = x(1), x(value)
            faster = value <= 1
            # Against a floor or a reference doing less work, above 1 is overhead, not a lost race.
            colour = '#5c7cfa' if note.split(':')[0] in ('floor', 'reference') else '#43a047' if faster else '#e53935'
            left, bar_w = min(start, end), max(abs(end - start), 1.5)
            tip = escape(f'{label}: {value:.2f}×' + (f' ({note})' if note else ''))
            svg.append(f'<g><title>{tip}</title>')
            svg.append(f'<text x="{label_right}" y="{mid + 4:.1f}" text-anchor="end" fill="#333">{escape(label)}</text>')
            svg.append(f'<rect x="{left:.1f}" y="{mid - 6:.1f}" width="{bar_w:.1f}" height="12" fill="{colour}"/>')
            text_x, anchor = (left - 4, 'end') if faster else (left + bar_w + 4, 'start')
            svg.append(f'<text x="{text_x:.1f}" y="{mid + 4:.1f}" text-anchor="{anchor}" fill="#222">{value:.2f}×</text></g>')
            y += row_h
    svg.append('</svg>')
    with open(out_path, 'w', encoding='utf-8') as f:
        f.write('\n'.join(svg) + '\n')


def main(argv):
    if len(argv) == 4 and argv[1] == 'chart':
        chart(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == 'targets':
        print(targets_table(argv[2]))
    elif len(argv) == 3 and argv[1] == 'unmet':
        print(unmet_list(argv[2]))
    elif len(argv) == 4 and argv[1] == 'compare':
        print(compare_table(argv[2], argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv)
