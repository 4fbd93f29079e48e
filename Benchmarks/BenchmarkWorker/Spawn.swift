// The `exec` mode: an external tool (djpeg, vips, vipsthumbnail) timed as a process per run.
// It lives in the worker, not in magpie-bench, because a child inherits its parent's peak RSS
// as its own starting high-water mark (exec records the old address space's peak in
// ru_maxrss), and magpie-bench has decoded whole images; this process stays small.
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Wall time and peak RSS of one finished child.
struct ChildRun {
    var ms: Double
    var maxRSSKiB: Int
}

/// Spawns `command` with stdin/stdout/stderr on /dev/null, waits for it and returns its wall
/// time and ru_maxrss, or nil when it cannot start or exits non-zero.
func spawnAndWait(_ command: [String]) -> ChildRun? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for fd: Int32 in 0...2 {
        posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let clock = ContinuousClock()
    let start = clock.now
    guard posix_spawn(&pid, command[0], &actions, nil, argv, environ) == 0 else { return nil }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let elapsed = milliseconds(clock.now - start)
    guard status == 0 else { return nil }
    return ChildRun(ms: elapsed, maxRSSKiB: usage.ru_maxrss)
}

/// Runs `baseline` and `command` alternately (two warm-ups, then `runs` each) so drift hits both
/// alike; the time is the command's median minus the baseline's (spawn, and for vips its start-up),
/// the peak RSS the command's largest ru_maxrss.
func measureCommand(runs: Int, baseline: [String], command: [String]) -> Measurement? {
    // Taken before any spawn: the high-water mark every child starts from.
    let ownPeak = peakRSSKiB()
    var base: [Double] = []
    var times: [Double] = []
    var peak = 0
    for run in 0..<(runs + 2) {
        guard let b = spawnAndWait(baseline), let c = spawnAndWait(command) else { return nil }
        guard run >= 2 else { continue }
        base.append(b.ms)
        times.append(c.ms)
        peak = max(peak, c.maxRSSKiB)
    }
    let baselineMs = median(base)
    return Measurement(
        medianMs: max(0, median(times) - baselineMs), peakRSSKiB: peak, baselineMs: baselineMs, floorKiB: ownPeak)
}
