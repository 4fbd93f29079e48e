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
