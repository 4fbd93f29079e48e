import Foundation

/// Runs a command with a pseudo-terminal as its stdin, stdout and stderr (util-linux `script`),
/// for testing what a command draws on a terminal.
enum PseudoTerminal {
    /// Runs `executable` with `arguments` to the end under a `columns`×`rows` terminal, blocking the
    /// calling thread (call it off the cooperative pool).
    ///
    /// - Parameter environment: added to this process's environment; `TERM` defaults to `xterm`
    ///   and `NO_COLOR` is removed unless given here, so colour depends on the command's flags alone.
    /// - Returns: the exit status and everything written to the terminal (stdout and stderr
    ///   interleaved; the terminal turns each `\n` into `\r\n`).
    static func run(
        _ executable: URL, _ arguments: [String], columns: Int = 80, rows: Int = 24, environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String) {
        let command = ([executable.path] + arguments).map(quoted).joined(separator: " ")
        // The window size is set inside the terminal, before the command starts.
        let script = "stty cols \(columns) rows \(rows) 2>/dev/null; exec \(command)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", script, "/dev/null"]
        var merged = ProcessInfo.processInfo.environment
        merged["NO_COLOR"] = nil
        merged["TERM"] = "xterm"
        merged["COLUMNS"] = "\(columns)"
        process.environment = merged.merging(environment) { _, given in given }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: bytes, as: UTF8.self))
    }

    /// `text` as one single-quoted shell word.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
