"""Processes as /proc shows them: a process tree and its CPU time, a core's busy time (scripts/bench-serve,
scripts/bench-cluster, scripts/bench-library)."""
import os
import resource


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


def core_busy_seconds(core):
    """Seconds one core has spent on any process (user, nice, system) or lost to the hypervisor (steal), from
    /proc/stat's line for that core; interrupts are left out, as busy_seconds() in bench-serve leaves them."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{core} "):
                fields = [int(x) for x in line.split()[1:]] + [0] * 8
                return (fields[0] + fields[1] + fields[2] + fields[7]) / os.sysconf("SC_CLK_TCK")
    raise ValueError(f"/proc/stat has no line for core {core}")


def children_cpu_seconds():
    """User + system seconds of this process's reaped children (every child run to its end so far)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def io_stall_seconds():
    """Seconds during which every runnable task on the machine waited for I/O, since boot (the kernel's pressure
    stall information, /proc/pressure/io's "full" line), or None where the kernel does not report it. A shared VM's
    disk can stall for seconds, and a server that writes its cache then stops working for as long."""
    try:
        with open("/proc/pressure/io") as f:
            for line in f:
                if line.startswith("full "):
                    return int(line.rsplit("total=", 1)[1]) / 1e6
    except (OSError, ValueError, IndexError):
        return None
    return None
