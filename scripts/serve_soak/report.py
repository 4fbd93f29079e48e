"""The Markdown report of a soak: the verdicts, the statuses by kind, the failures, bodies and latency, memory per
instance and nginx's error log."""

import collections
import os
import re
import urllib.parse

from .checks import crash_lines
from .formats import PILImage
from .memory import rss_verdict
from .settings import BURST_SIZE, DEADLINE, HEADER_TIMEOUT, IDLE_BEFORE_END, REPO, RSS_TARGET


class Report:
    """Mixed into Soak: reads what a run of it collected."""

    def report(self, out):
        """Writes the Markdown report; returns True when every check passed."""
        arguments, results = self.arguments, self.results
        verdicts = []

        def verdict(name, passed, detail):
            verdicts.append((name, passed, detail))

        print(f"## serve-soak: {arguments.instances} × `magpie serve` behind nginx, {arguments.minutes:g} min mixed "
              f"at concurrency {arguments.concurrency}", file=out)
        print(file=out)
        print(f"- binary: `{arguments.magpie or os.path.join(REPO, '.build/release/magpie')}`; seed {self.rng_seed}; "
              f"{os.cpu_count()} cores; Pillow {'13 decodes every 200' if PILImage else 'missing: sizes from headers'}",
              file=out)
        flags, prefixes, pairs = [], 0, iter(self.serve_flags)
        for flag in pairs:
            if flag == "--allow-source":
                next(pairs, None)
                prefixes += 1
            else:
                flags.append(flag)
        print(f"- instance flags: `{' '.join(flags)}` and {prefixes} `--allow-source` prefixes (every origin route but "
              f"/secret, and the refused addresses); keys random per run, through MAGPIE_KEY/MAGPIE_SALT and "
              f"scripts/cluster's key file", file=out)
        print(f"- requests: {self.counts['serial']} in the serial pass, {self.counts['mix']} in "
              f"{self.mix_seconds:.0f} s of mixed load ({self.counts['mix'] / max(1, self.mix_seconds):.1f}/s); "
              f"state and logs in `{self.state_dir}`", file=out)
        print(file=out)

        # Status table
        rows = sorted(results.table.items(), key=lambda item: (item[0][1] != "serial", item[0][0]))
        status_failures = results.failure_counts["status"]
        verdict("status is the documented one", status_failures == 0,
                f"{results.passes['status']} as documented, {status_failures} not")
        verdict("429 carries Retry-After", results.failure_counts["retry-after"] == 0,
                f"{results.passes['retry-after']} with, {results.failure_counts['retry-after']} without")
        verdict("errors are Magpie's (text/plain), not nginx pages", results.failure_counts["error-origin"] == 0,
                f"{results.passes['error-origin']} Magpie's, {results.failure_counts['error-origin']} not")
        hangs = results.failure_counts["hang"]
        verdict(f"no hang (deadline {DEADLINE:.0f} s)", hangs == 0,
                f"{hangs} over the deadline; longest answer {results.longest[0]:.1f} s ({results.longest[1]})")
        verdict("no transport error (reset, short body)", results.failure_counts["transport"] == 0,
                f"{results.failure_counts['transport']}")
        for check, title in (("length", "Content-Length = body length"), ("magic", "magic bytes match Content-Type"),
                             ("format", "format is the one URL + Accept token ask for"),
                             ("identity", "same (path, cache variant) → same bytes"),
                             ("size", "decoded size is what the options make of that source")):
            verdict(title, results.failure_counts[check] == 0,
                    f"{results.passes[check]} passed, {results.failure_counts[check]} failed")
        # Crashes
        status = self.final_status
        crash_texts = []
        for instance in status.get("instances", []):
            first = self.started_pids.get(instance["index"])
            if not instance.get("running"):
                crash_texts.append(f"instance {instance['index']} (pid {first}) is not running")
            elif instance.get("pid") != first:
                crash_texts.append(f"instance {instance['index']} has pid {instance.get('pid')}, started as {first}")
            elif not instance.get("healthy"):
                crash_texts.append(f"instance {instance['index']} does not answer /health")
        if not status.get("nginx_running"):
            crash_texts.append("nginx is not running")
        for index, text in sorted(self.logs.items()):
            for line in crash_lines(text)[:5]:
                crash_texts.append(f"instance {index} log: {line.strip()[:200]}")
        verdict("no crash (pids alive, unchanged, healthy; no crash line in the logs)", not crash_texts,
                f"{len(status.get('instances', []))} instances checked" + (f"; {len(crash_texts)} problems" if crash_texts else ""))
        escapes = self.origin_stats.get("hits", {}).get("secret", 0)
        verdict("no source escaped --allow-source (the origin's /secret never asked)", escapes == 0,
                f"{escapes} requests to /secret")
        for check, title in (("config", "a bad setting stops the server (exit 2) with the nearest name"),
                             ("http/1.0", "HTTP/1.0 without keep-alive: answered, then closed"),
                             ("slow head", f"a head slower than --header-timeout {HEADER_TIMEOUT} s: 408, then closed")):
            verdict(title, results.failure_counts[check] == 0 and results.passes[check] > 0,
                    f"{results.passes[check]} passed, {results.failure_counts[check]} failed")
        verdict("SSRF trap on 127.0.0.2 never reached", self.trap.hits == 0,
                f"{self.trap.hits} connections" + ("" if self.trap.socket else " (trap could not listen)"))
        overload_total = sum(c[s] for c in results.bursts for s in (429, 503))
        verdict("bursts past workers + queue are shed (some 429/503)", not results.bursts or overload_total > 0,
                f"{len(results.bursts)} bursts, {overload_total} answers 429/503 of {BURST_SIZE * len(results.bursts)}")

        # RSS
        rss_rows, ratios, net_ratios = [], [], []
        for instance in self.instances:
            samples = self.rss.get(instance["index"], [])
            warm = next((kib for t, kib in samples if t >= self.warmup), None)
            tail = [kib for t, kib in samples if t >= self.end_time - 1]
            end = sorted(tail)[len(tail) // 2] if tail else (samples[-1][1] if samples else None)
            peak = max((kib for _, kib in samples), default=None)
            ratio, _ = rss_verdict(warm, end) if warm and end else (None, False)
            cache_warm = self.metrics.get((instance["index"], "warm-up"))
            cache_end = self.metrics.get((instance["index"], "end"))
            net_ratio = None
            if warm and end and cache_warm is not None and cache_end is not None:
                net_warm, net_end = warm - cache_warm / 1024, end - cache_end / 1024
                net_ratio = net_end / net_warm if net_warm > 0 else None
            if ratio is not None:
                ratios.append(ratio)
            if net_ratio is not None:
                net_ratios.append(net_ratio)
            rss_rows.append((instance, warm, end, peak, ratio, cache_warm, cache_end, net_ratio))
        worst = max(ratios) if ratios else None
        verdict(f"RSS at the end ≤ {RSS_TARGET:.2f} × after warm-up (every instance)",
                worst is not None and worst <= RSS_TARGET,
                f"max end/warm-up {worst:.3f}" if worst is not None else "no samples")

        print("### Verdicts", file=out)
        print(file=out)
        print("| check | result | counts |", file=out)
        print("|---|---|---|", file=out)
        for name, passed, detail in verdicts:
            print(f"| {name} | {'pass' if passed else '**FAIL**'} | {detail} |", file=out)
        print(file=out)

        print("### Statuses by kind", file=out)
        print(file=out)
        print("`serial`: each fixed case once, nothing else running (exactly the documented status). `mix`: the "
              "mixed load; a request that needs a worker may also get 429/503 (the overload column).", file=out)
        print(file=out)
        print("| kind → documented | phase | requests | seen | overload 429/503 | unexpected |", file=out)
        print("|---|---|---:|---|---:|---:|", file=out)
        for (group, phase), row in rows:
            seen = ", ".join(f"{s}×{c}" for s, c in sorted(row["seen"].items(), key=lambda item: str(item[0])))
            print(f"| {group} | {phase} | {row['requests']} | {seen} | {row['overload']} | "
                  f"{row['unexpected'] if not row['unexpected'] else '**' + str(row['unexpected']) + '**'} |", file=out)
        print(file=out)

        failed = [check for check in results.failure_counts if results.failure_counts[check]]
        if failed or crash_texts:
            print("### Failures (first 40 of each check)", file=out)
            print(file=out)
            for check in sorted(failed):
                print(f"- **{check}** ({results.failure_counts[check]}):", file=out)
                for text in results.failures[check]:
                    print(f"  - {text}", file=out)
            for text in crash_texts:
                print(f"- **crash**: {text}", file=out)
            print(file=out)
            # What the origin saw of the file behind each unexpected status (a slow origin, or none at all).
            for when, expect, status, path in results.status_events[:10]:
                if not expect.file:
                    continue
                quoted = urllib.parse.quote(expect.file)
                seen = [(arrived - when, answered - arrived) for route, rest, arrived, answered in self.origin_stats["log"]
                        if route == "file" and rest in (quoted, expect.file) and when - 30 <= arrived <= when]
                print(f"- origin requests for `{expect.file}` in the 30 s before the {status} answer: " + (", ".join(
                    f"at {offset:+.2f} s took {took * 1000:.0f} ms" for offset, took in seen[-8:]) or "none"), file=out)
            print(file=out)

        print("### Bodies, latency, bursts, clients", file=out)
        print(file=out)
        latencies = sorted(results.latencies)
        if latencies:
            def pct(p):
                return latencies[min(len(latencies) - 1, int(p * len(latencies)))]
            print(f"- latency: p50 {pct(0.5) * 1000:.0f} ms, p99 {pct(0.99) * 1000:.0f} ms, max {latencies[-1]:.1f} s "
                  f"({len(latencies)} answers)", file=out)
        print(f"- distinct (path, cache variant) with a 200: {len(results.bodies)}; distinct bodies sized: "
              f"{len(results.sizes)} ({', '.join(f'{k} {v}' for k, v in results.decoders.items()) or 'none'})", file=out)
        print(f"- nginx X-Cache-Status: " + ", ".join(f"{k} {v}" for k, v in results.cache_status.most_common()), file=out)
        if results.bursts:
            totals = collections.Counter()
            for burst in results.bursts:
                totals.update(burst)
            print(f"- bursts: {len(results.bursts)} × {BURST_SIZE}: " +
                  ", ".join(f"{s}×{c}" for s, c in sorted(totals.items(), key=lambda item: str(item[0]))), file=out)
        print(f"- clients that hung up after a few bytes: status line seen " +
              ", ".join(f"{s}×{c}" for s, c in sorted(results.disconnect_status.items(), key=lambda item: str(item[0]))),
              file=out)
        varied = {name: counts for name, counts in results.file_statuses.items() if len(counts) > 1}
        print(f"- bomb and corrupt files answered with more than one status (each documented for the file; the "
              f"box differs per request): " + ("; ".join(
                  f"{name} " + ", ".join(f"{s}×{c}" for s, c in sorted(counts.items())) for name, counts in
                  sorted(varied.items())) or "none"), file=out)
        print(f"- origin requests by route: " + ", ".join(
            f"{k} {v}" for k, v in sorted(self.origin_stats["hits"].items()) if k != "__stats"), file=out)
        file_log = [entry for entry in self.origin_stats["log"] if entry[0] == "file"]
        if file_log:
            durations = sorted(answered - arrived for _, _, arrived, answered in file_log)
            print(f"- origin /file answers: {len(durations)}, median {durations[len(durations) // 2] * 1000:.1f} ms, "
                  f"max {durations[-1] * 1000:.0f} ms (from request line to last byte written)", file=out)
        print(file=out)

        print("### Memory (VmRSS per instance)", file=out)
        print(file=out)
        print(f"Warm-up: the first sample at or after {self.warmup:.0f} s of mixed load; end: median of the samples "
              f"after {IDLE_BEFORE_END:.0f} s idle. Cache: `magpie_server_memory_cache_bytes` from the instance's "
              f"/metrics. Net: RSS minus that gauge.", file=out)
        print(file=out)
        print("| instance | pid | RSS warm-up | RSS end | end/warm-up | peak | result cache warm-up → end | "
              "net RSS warm-up → end | net end/warm-up |", file=out)
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|", file=out)

        def mib(kib):
            return f"{kib / 1024:.1f} MiB" if kib else "—"

        for instance, warm, end, peak, ratio, cache_warm, cache_end, net_ratio in rss_rows:
            cache_text = (f"{cache_warm / 1048576:.1f} → {cache_end / 1048576:.1f} MiB"
                          if cache_warm is not None and cache_end is not None else "—")
            net_text = (f"{mib(warm - cache_warm / 1024)} → {mib(end - cache_end / 1024)}"
                        if warm and end and cache_warm is not None and cache_end is not None else "—")
            print(f"| {instance['index']} | {instance['pid']} | {mib(warm)} | {mib(end)} | "
                  f"{'%.3f' % ratio if ratio else '—'} | {mib(peak)} | {cache_text} | {net_text} | "
                  f"{'%.3f' % net_ratio if net_ratio else '—'} |", file=out)
        print(file=out)
        met = worst is not None and worst <= RSS_TARGET
        net_worst = max(net_ratios) if net_ratios else None
        print(f"Target (RSS back within {100 * (RSS_TARGET - 1):.0f} % of its level after warm-up): max end/warm-up "
              f"over instances {'%.3f' % worst if worst else '—'}: **{'met' if met else 'not met'}**"
              + (f"; net of the result cache {net_worst:.3f}: {'within' if net_worst <= RSS_TARGET else 'not within'} "
                 f"{100 * (RSS_TARGET - 1):.0f} %." if net_worst else "."), file=out)
        timeline = []
        for instance in self.instances:
            samples = self.rss.get(instance["index"], [])
            marks = []
            for minute in range(1, int(self.mix_seconds // 60) + 1):
                sample = next((kib for t, kib in samples if t >= minute * 60), None)
                if sample:
                    marks.append(f"{minute}: {sample / 1024:.0f}")
            if marks:
                timeline.append(f"instance {instance['index']} — " + ", ".join(marks))
        if timeline:
            print(file=out)
            print("RSS (MiB) at each minute of the mix: " + "; ".join(timeline) + ".", file=out)
        split = []
        for instance in self.instances:
            parts = self.parts.get(instance["index"], [])
            warm = next(((anon, mapped) for t, anon, mapped in parts if t >= self.warmup), None)
            if warm and parts and warm[0] and parts[-1][1]:
                split.append(f"instance {instance['index']}: anonymous {warm[0] / 1024:.1f} → {parts[-1][1] / 1024:.1f} "
                             f"MiB, file-backed {warm[1] / 1024:.1f} → {parts[-1][2] / 1024:.1f} MiB")
        if split:
            print(file=out)
            print("RSS split (RssAnon / RssFile, warm-up → end): " + "; ".join(split) + ".", file=out)
        print(file=out)

        errors = collections.Counter()
        for line in self.nginx_errors.splitlines():
            match = re.search(r"\[(error|crit|alert|emerg)\] \d+#\d+: \*?\d* ?(.*?)(, client:|$)", line)
            if match:
                errors[re.sub(r"\d+", "N", match.group(2))[:110]] += 1
        print("### nginx error log", file=out)
        print(file=out)
        if errors:
            for text, count in errors.most_common(12):
                print(f"- {count} × `{text}`", file=out)
        else:
            print("- no error lines", file=out)
        print(file=out)
        return all(passed for _, passed, _ in verdicts)
