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

/// Why an external tool did not give a measurement: it could not start, or it failed.
struct SpawnFailure: Error, CustomStringConvertible {
    let description: String
}

/// Where each child's standard error goes (truncated per spawn), so a failure can say what the tool said.
let childErrorPath = "/tmp/magpie-bench-worker-\(getpid()).stderr"

/// Spawns `command` with stdin/stdout on /dev/null and stderr on `childErrorPath`, waits for it and returns its
/// wall time and ru_maxrss; throws, naming the command, when it cannot start, exits non-zero or is killed.
func spawnAndWait(_ command: [String]) throws -> ChildRun {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, childErrorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let clock = ContinuousClock()
    let start = clock.now
    let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
    guard spawned == 0 else { throw SpawnFailure(description: "\(command[0]): cannot start: \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let elapsed = milliseconds(clock.now - start)
    guard status == 0 else {
        let how = status & 0x7f == 0 ? "exit status \((status >> 8) & 0xff)" : "killed by signal \(status & 0x7f)"
        let said = (try? String(decoding: Data(contentsOf: URL(fileURLWithPath: childErrorPath)), as: UTF8.self)) ?? ""
        let tail = said.split(separator: "\n").suffix(3).joined(separator: " | ")
        throw SpawnFailure(description: "`\(command.joined(separator: " "))` failed (\(how))\(tail.isEmpty ? "" : ": " + tail)")
    }
    return ChildRun(ms: elapsed, maxRSSKiB: usage.ru_maxrss)
}

/// Runs `baseline` and `command` alternately (two warm-ups, then `runs` each) so drift hits both
/// alike; the time is the command's median minus the baseline's (spawn, and for vips its start-up),
/// the peak RSS the command's largest ru_maxrss. Throws on the first run of either that fails.
func measureCommand(runs: Int, baseline: [String], command: [String]) throws -> Measurement {
    // Taken before any spawn: the high-water mark every child starts from.
    let ownPeak = peakRSSKiB()
    defer { unlink(childErrorPath) }
    var base: [Double] = []
    var times: [Double] = []
    var peak = 0
    for run in 0..<(runs + 2) {
        let b = try spawnAndWait(baseline), c = try spawnAndWait(command)
        guard run >= 2 else { continue }
        base.append(b.ms)
        times.append(c.ms)
        peak = max(peak, c.maxRSSKiB)
    }
    let baselineMs = median(base)
    return Measurement(
        medianMs: max(0, median(times) - baselineMs), peakRSSKiB: peak, baselineMs: baselineMs, floorKiB: ownPeak)
}
