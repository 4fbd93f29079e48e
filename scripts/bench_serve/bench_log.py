"""Rows for scripts/bench's chart and targets table (Benchmarks/report.py), appended to the file that
$MAGPIE_BENCH_RATIOS names, as Benchmarks/Support/BenchLog.swift does for the Swift benchmarks. Unset (bench-serve or
bench-cluster run on their own), nothing is written and the Markdown is the output."""
import math
import os


def _append(*fields):
    path = os.environ.get("MAGPIE_BENCH_RATIOS")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write("\t".join(str(f).replace("\t", " ").replace("\n", " ") for f in fields) + "\n")


def ratio(section, label, value, note=""):
    """A chart bar: Magpie's time (memory section: peak RSS) divided by the peer's, so below 1 Magpie does better."""
    if value and math.isfinite(value) and value > 0:
        _append(section, label, f"{value:.4f}", note)


def target(key, subject, measured, limit, verdict):
    """A target verdict: the key as Benchmarks/report.py lists it, what was measured, value and limit as text, and
    the verdict: True / False, or "met", "not met" or "noisy" (alternated pairs that disagreed by 10 % or more)."""
    if not isinstance(verdict, str):
        verdict = "met" if verdict else "not met"
    _append("target", key, subject, measured, limit, verdict)
