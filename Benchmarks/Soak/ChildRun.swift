import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended, and what it printed and used.
struct ChildResult: Sendable {
    /// The exit status when it exited; nil when a signal ended it.
    let exitStatus: Int32?
    /// The signal that ended it, if one did.
    let signal: Int32?
    let stdout: Data
    /// The last 64 KiB of its stderr.
    let stderrTail: String
    let duration: Duration
    /// Peak resident set size in bytes: the kernel's high-water mark (wait4's ru_maxrss, and VmHWM sampled
    /// every ~100 ms, whichever is larger).
    let peakRSS: Int
    /// Largest VmRSS seen while sampling.
    let sampledRSS: Int
    /// The watchdog killed it.
    let hung: Bool
    /// It was killed on purpose (``ChildRun/Plan/killAfterLines``).
    let killedOnPurpose: Bool
    /// The deliberate kill landed while a file was in ``ChildRun/Plan/killWhileFilesIn``.
    let killedWithFileOpen: Bool
}

/// Runs one child process with stdin fed from memory and stdout/stderr captured, samples its memory from
/// `/proc`, and kills it on a deadline (a hang) or on purpose. Blocking reads and the wait run on threads
/// of their own, never on the cooperative pool.
enum ChildRun {
    /// When to give up on the child, or to kill it deliberately.
    struct Plan: Sendable {
        /// SIGKILL after this long and report a hang.
        var deadline: Duration
        /// SIGKILL once stdout has this many lines (the "killed mid-write" case); nil: never.
        var killAfterLines: Int?
        /// After `killAfterLines`, wait (up to 3 s) for a file to show up in this folder and kill at that
        /// moment: a cache write in progress (its temporary file exists) is cut short.
        var killWhileFilesIn: String?
    }

    static func run(_ executable: String, _ arguments: [String], stdin input: Data, plan: Plan,
                    onSample: @Sendable (Int) -> Void = { _ in }) async throws -> ChildResult {
        let started = ContinuousClock.now
        let child = try Spawned(executable: executable, arguments: arguments)
        let output = Captured(), errors = Captured(tailLimit: 64 * 1024)
        let exit = Mutex<(status: Int32, maxRSS: Int)?>(nil)
        Thread.detachNewThread { writeAll(input, to: child.stdin) }
        Thread.detachNewThread { output.drain(child.stdout) }
        Thread.detachNewThread { errors.drain(child.stderr) }
        Thread.detachNewThread {
            var status: Int32 = 0
            var usage = rusage()
            while wait4(child.pid, &status, 0, &usage) < 0 && errno == EINTR {}
            // ru_maxrss is in KiB on Linux.
            exit.withLock { $0 = (status, Int(usage.ru_maxrss) * 1024) }
        }
        var hung = false, killed = false, peak = 0, sampledRSS = 0
        let caughtWrite = Mutex(false)
        while exit.withLock({ $0 }) == nil {
            if let memory = ProcessMemory.read(pid: child.pid) {
                peak = max(peak, memory.highWaterMark)
                sampledRSS = max(sampledRSS, memory.resident)
                onSample(memory.resident)
            }
            if !hung && !killed && ContinuousClock.now - started > plan.deadline {
                hung = true
                kill(child.pid, SIGKILL)
            }
            if !hung && !killed, let lines = plan.killAfterLines, output.lineCount >= lines {
                killed = true
                let folder = plan.killWhileFilesIn, pid = child.pid
                // Polls far faster than the sampling loop could: a write lasts milliseconds.
                Thread.detachNewThread {
                    let giveUp = ContinuousClock.now + .seconds(3)
                    while let folder, ContinuousClock.now < giveUp {
                        if Self.hasFiles(folder) {
                            caughtWrite.withLock { $0 = true }
                            break
                        }
                        usleep(200)
                    }
                    kill(pid, SIGKILL)
                }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        let (status, maxRSS) = exit.withLock { $0! }
        // The readers finish once the child's end of each pipe is closed, which its exit did.
        await output.finished()
        await errors.finished()
        let signalled = status & 0x7F
        return ChildResult(
            exitStatus: signalled == 0 ? (status >> 8) & 0xFF : nil, signal: signalled == 0 ? nil : signalled,
            stdout: output.data, stderrTail: String(decoding: errors.data, as: UTF8.self),
            duration: ContinuousClock.now - started, peakRSS: max(peak, maxRSS), sampledRSS: sampledRSS,
            hung: hung, killedOnPurpose: killed, killedWithFileOpen: caughtWrite.withLock { $0 })
    }

    /// Whether `folder` holds anything (cheaper than listing it).
    private static func hasFiles(_ folder: String) -> Bool {
        guard let dir = opendir(folder) else { return false }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { raw in raw[0] == 0x2E && (raw[1] == 0 || (raw[1] == 0x2E && raw[2] == 0)) }
            if !isDot { return true }
        }
        return false
    }

    /// Writes everything (a child that exits early makes the write fail with EPIPE, which is ignored), then closes.
    private static func writeAll(_ data: Data, to fd: Int32) {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    break
                }
                offset += written
            }
        }
        close(fd)
    }
}

/// VmRSS and VmHWM of a running process.
struct ProcessMemory {
    let resident: Int
    let highWaterMark: Int

    static func read(pid: pid_t) -> ProcessMemory? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") || line.hasPrefix("VmHWM:") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if parts.count >= 2, let kib = Int(parts[1]) { values[String(parts[0])] = kib * 1024 }
        }
        guard let resident = values["VmRSS:"], let peak = values["VmHWM:"] else { return nil }
        return ProcessMemory(resident: resident, highWaterMark: peak)
    }
}

/// A process started with posix_spawn, its stdin, stdout and stderr connected to pipes.
private struct Spawned: Sendable {
    let pid: pid_t
    let stdin: Int32
    let stdout: Int32
    let stderr: Int32

    init(executable: String, arguments: [String]) throws {
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw SoakError("pipe failed: \(String(cString: strerror(errno)))") }
            // Only this thread spawns, so no other child can inherit them before the flag is set.
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            pipes.append(fds)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears FD_CLOEXEC on the copies; every original closes on exec.
        posix_spawn_file_actions_adddup2(&actions, pipes[0][0], 0)
        posix_spawn_file_actions_adddup2(&actions, pipes[1][1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(pipes[0][0])
        close(pipes[1][1])
        close(pipes[2][1])
        guard status == 0 else {
            for fd in [pipes[0][1], pipes[1][0], pipes[2][0]] { close(fd) }
            throw SoakError("cannot start \(executable): \(String(cString: strerror(status)))")
        }
        self.pid = pid
        stdin = pipes[0][1]
        stdout = pipes[1][0]
        stderr = pipes[2][0]
    }
}

/// Bytes read from a pipe on a thread of its own, readable from anywhere while they arrive.
private final class Captured: Sendable {
    private let state = Mutex<(data: Data, lines: Int, done: Bool)>((Data(), 0, false))
    private let tailLimit: Int?

    init(tailLimit: Int? = nil) { self.tailLimit = tailLimit }

    var data: Data { state.withLock { $0.data } }
    var lineCount: Int { state.withLock { $0.lines } }

    /// Reads `fd` to its end (blocking: run on a thread of its own), then closes it.
    func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            let chunk = buffer[0..<count]
            let newlines = chunk.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            state.withLock { state in
                state.data.append(contentsOf: chunk)
                state.lines += newlines
                if let limit = tailLimit, state.data.count > 2 * limit { state.data = Data(state.data.suffix(limit)) }
            }
        }
        close(fd)
        state.withLock { $0.done = true }
    }

    /// Returns once `drain` has reached the end of the pipe.
    func finished() async {
        while !state.withLock({ $0.done }) { try? await Task.sleep(for: .milliseconds(10)) }
    }
}
