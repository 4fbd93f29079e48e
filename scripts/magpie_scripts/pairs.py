"""Alternated pairs and their verdict, as scripts/bench-serve and scripts/bench-library judge them.

A cell runs magpie and its peer (or its floor) by turns, pair after pair, each side pinned to its own core. Each pair
gives one ratio; the cell reports their median and their spread, and gives a verdict only when the pairs agree.

When the first pairs (--pairs, 3 in a full run) spread by NOISY or more, EXTRA_PAIRS more are measured, and from
TRIM_FROM pairs on the spread is judged without the highest and the lowest ratio. On this shared host one pair in a
few is slowed on one side by something no counter in the VM sees (the same thumbnail took 38-46 ms from process to
process with no other process on its core); such a pair moves one end of the range, and the median not at all. Three
agreeing pairs out of five give a verdict; a cell whose middle still disagrees stays "noisy"."""
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
EXTRA_PAIRS = 2  # measured once, beyond the first pairs, when those spread by NOISY or more
TRIM_FROM = 5  # from this many pairs on, the spread leaves out the highest and the lowest ratio
RULE = (f"a verdict needs the pairs' ratios within {NOISY * 100:.0f} % of their median; when the first pairs spread "
        f"more, {EXTRA_PAIRS} more are measured, and from {TRIM_FROM} pairs on the spread leaves out the highest and "
        f"the lowest ratio (every pair is listed); otherwise the verdict reads noisy")


def judged(values):
    """The ratios a cell's spread is judged on: all of them, or from TRIM_FROM on all but the highest and the lowest."""
    values = sorted(values)
    return values[1:-1] if len(values) >= TRIM_FROM else values


def spread(values):
    """(largest − smallest) / median of a cell's judged() per-pair ratios; None from fewer than two pairs."""
    values = judged(values)
    if len(values) < 2:
        return None
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else None


def verdict(met, spread_of_pairs):
    """A target's verdict from the median ratio, unless the pairs disagree by NOISY or more: then "noisy"."""
    if spread_of_pairs is not None and spread_of_pairs >= NOISY:
        return "noisy"
    return "met" if met else "not met"


def extra_pairs(values):
    """How many more pairs a cell with these per-pair ratios should measure: EXTRA_PAIRS when they spread by NOISY or
    more, else none. Asked once, after the first pairs."""
    width = spread(values)
    return EXTRA_PAIRS if width is not None and width >= NOISY else 0


def spread_text(value):
    """A spread as the report prints it: "4 %", or "–" from a single pair."""
    return "–" if value is None else f"{value * 100:.0f} %"
