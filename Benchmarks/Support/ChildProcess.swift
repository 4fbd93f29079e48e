// Running a peer tool, the worker or a Python script as a child process, for every bench executable.
import Foundation

/// A finished child process: its exit status (128 + the signal when one killed it) and what it printed.
public struct FinishedProcess: Sendable {
    /// The exit status, or 128 + the signal number.
    public var status: Int32
    /// Everything it wrote to standard output.
    public var output: String
    /// Everything it wrote to standard error.
    public var errors: String
    /// The signal that ended it, nil when it exited.
    public var signal: Int32?

    /// The last three lines of standard error, for a failure's message.
    public var errorTail: String { errors.split(separator: "\n").suffix(3).joined(separator: " | ") }
}

/// Runs `executable` with `arguments` to completion; nil when it cannot start.
///
/// Standard error goes to a temporary file rather than a second pipe: a child that fills one pipe while this
/// process reads the other would hang.
public func runToCompletion(_ executable: String, _ arguments: [String]) -> FinishedProcess? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    let errorPath = FileManager.default.temporaryDirectory
        .appendingPathComponent("magpie-bench-\(getpid())-\(UUID().uuidString)-stderr.txt").path
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errorPath) }
    process.standardError = FileHandle(forWritingAtPath: errorPath) ?? FileHandle.nullDevice
    do { try process.run() } catch { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
    let exited = process.terminationReason == .exit
    return FinishedProcess(
        status: exited ? process.terminationStatus : 128 + process.terminationStatus,
        output: String(decoding: data, as: UTF8.self), errors: errors, signal: exited ? nil : process.terminationStatus)
}
