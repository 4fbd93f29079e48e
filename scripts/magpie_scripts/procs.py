"""Processes as /proc shows them: a process tree and its CPU time (scripts/bench-serve, scripts/bench-cluster)."""
import os


def process_tree(root):
    """root and all its descendants, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    tree, queue = [], [root]
    while queue:
        pid = queue.pop()
        tree.append(pid)
        queue.extend(children.get(pid, []))
    return tree


def cpu_seconds(pids):
    """User + system seconds of `pids`, with those of their reaped children, from /proc."""
    total = 0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            total += sum(int(x) for x in fields[11:15])  # utime, stime, and those of reaped children
        except (OSError, ValueError, IndexError):
            pass
    return total / tick
