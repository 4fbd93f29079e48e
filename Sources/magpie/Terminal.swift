import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the CLI needs to know about its terminal.
enum Terminal {
    /// Standard output or standard error.
    enum Stream: Sendable {
        case standardOutput, standardError

        var descriptor: Int32 { self == .standardOutput ? STDOUT_FILENO : STDERR_FILENO }
    }

    /// Whether `stream` is a terminal (not a pipe or a file).
    static func isTTY(_ stream: Terminal.Stream) -> Bool {
        isatty(stream.descriptor) == 1
    }

    /// The terminal's width in columns: the window size of `stream`, else `$COLUMNS`, else 80.
    static func columns(of stream: Terminal.Stream = .standardOutput) -> Int {
        var size = winsize()
        if ioctl(stream.descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return 80
    }

    /// The terminal's height in rows: the window size of `stream`, else `$LINES`, else 24.
    static func rows(of stream: Terminal.Stream = .standardOutput) -> Int {
        var size = winsize()
        if ioctl(stream.descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return Int(size.ws_row) }
        if let text = ProcessInfo.processInfo.environment["LINES"], let rows = Int(text), rows > 0 { return rows }
        return 24
    }

    /// Writes `text` as is (no newline added) and flushes, so partial lines such as a progress bar show at once.
    static func write(_ text: String, to stream: Terminal.Stream) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(stream.descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}

/// ANSI SGR styling that turns into plain text when disabled (`--no-color`, `NO_COLOR`, not a terminal).
struct TextStyle: Sendable {
    /// Whether escape sequences are emitted.
    let enabled: Bool

    func bold(_ text: String) -> String { wrap(text, "1") }
    func dim(_ text: String) -> String { wrap(text, "2") }
    func red(_ text: String) -> String { wrap(text, "31") }
    func green(_ text: String) -> String { wrap(text, "32") }
    func yellow(_ text: String) -> String { wrap(text, "33") }
    func cyan(_ text: String) -> String { wrap(text, "36") }

    private func wrap(_ text: String, _ code: String) -> String {
        enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
