"""Alternated pairs and their verdict, as scripts/bench-serve and scripts/bench-library judge them.

A cell runs magpie and its peer (or its floor) by turns, pair after pair, each side pinned to its own core. Each pair
gives one ratio; the cell reports their median and their spread, and gives a verdict only when the pairs agree."""
import statistics

NOISY = 0.10  # pairs whose ratios spread by this much (of their median) or more give no verdict: "noisy"
# A pair during which other processes (or the hypervisor's stolen time) took this much of a core or more measured the
# neighbour, not the code: it is set aside, kept in the report with its figures, and measured again, at most REMEASURES
# times; the last attempt stands whatever it saw.
DISTURBED = 5.0  # % of one core
# The same for the machine's disk: a pair during which every task waited for I/O this long (the kernel's pressure
# stall information) measured the host's disk, not the code.
IO_STALLED = 1.0  # seconds
REMEASURES = 2  # at most, per pair


def spread(values):
    """(largest − smallest) / median of a cell's per-pair ratios; None from fewer than two pairs."""
    values = list(values)
    if len(values) < 2:
        return None
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else None


def verdict(met, spread_of_pairs):
    """A target's verdict from the median ratio, unless the pairs disagree by NOISY or more: then "noisy"."""
    if spread_of_pairs is not None and spread_of_pairs >= NOISY:
        return "noisy"
    return "met" if met else "not met"


def spread_text(value):
    """A spread as the report prints it: "4 %", or "–" from a single pair."""
    return "–" if value is None else f"{value * 100:.0f} %"
