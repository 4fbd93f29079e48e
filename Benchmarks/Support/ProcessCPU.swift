import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The CPU time this process has used so far, every thread, user + system, in nanoseconds: on one pinned core,
/// what a row costs whatever else the machine runs (wall time also counts the neighbour's turns on the core).
public func processCPUNanoseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1e9 + Double(now.tv_nsec)
}

/// CPU time used so far by every child this process has waited for, user + system, in seconds.
public func waitedChildrenCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    let seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
    let micros = usage.ru_utime.tv_usec + usage.ru_stime.tv_usec
    return Double(seconds) + Double(micros) / 1e6
}

/// CPU time the machine's processes have used so far, every core, in seconds: user, nice and system from /proc/stat,
/// plus the time the hypervisor stole for its other guests; interrupts are left out, as scripts/bench-serve's
/// `busy_seconds` leaves them. Nil where /proc/stat cannot be read.
public func machineBusySeconds() -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
    else { return nil }
    let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard fields.count >= 8 else { return nil }
    // user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
    let busy = fields[0] + fields[1] + fields[2] + fields[7]
    return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
}
