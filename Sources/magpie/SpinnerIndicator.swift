import Magpie
import Synchronization

/// An `Indicator` for terminals: one status line on standard error (`⠹ loading URL  48% 123 KB`),
/// redrawn in place about twelve times a second and erased when loading stops.
///
/// The `Indicator` methods run under the binding lock, so they only start or cancel the ticking
/// task and record progress; drawing happens on the ticks. Every write happens under the
/// indicator's own lock, so no tick can draw after `stopAnimating` erased the line.
final class SpinnerIndicator: Indicator {
    private struct State {
        /// Which `startAnimating` the running ticker belongs to; a ticker of an older one stays quiet.
        var generation = 0
        var running = false
        var ticker: Task<Void, Never>?
        var progress: DownloadProgress?
        var frame = 0
        var drawn = false
    }

    private static let interval = Duration.milliseconds(80)

    private let label: String
    private let frames: [String]
    /// Whether `ESC[K` may be used; without it the line is erased by overwriting it with spaces.
    private let usesEscapes: Bool
    private let width: Int
    private let state = Mutex(State())

    /// An indicator showing `label` (for example `loading https://…`), with braille frames and
    /// escape sequences when `usesEscapes`, else `|/-\` and plain text only.
    init(label: String, usesEscapes: Bool, width: Int = Terminal.columns(of: .standardError)) {
        self.label = label
        self.usesEscapes = usesEscapes
        self.frames = usesEscapes ? ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] : ["|", "/", "-", "\\"]
        // One column less than the terminal: a line that fills it exactly can wrap, and then `\r` no longer erases it.
        self.width = max(1, width - 1)
    }

    func startAnimating() {
        state.withLock { state in
            guard !state.running else { return }
            state.running = true
            state.generation += 1
            state.progress = nil
            let generation = state.generation
            state.ticker = Task { [self] in
                // Sleeping first: a load that ends within one interval (a cache hit) draws nothing at all.
                while (try? await Task.sleep(for: Self.interval)) != nil {
                    tick(generation)
                }
            }
        }
    }

    func stopAnimating() {
        state.withLock { state in
            guard state.running else { return }
            state.running = false
            state.ticker?.cancel()
            state.ticker = nil
            if state.drawn {
                Terminal.write(usesEscapes ? "\r\u{1B}[K" : "\r" + String(repeating: " ", count: width) + "\r", to: .standardError)
                state.drawn = false
            }
        }
    }

    func update(progress: DownloadProgress) {
        state.withLock { $0.progress = progress }
    }

    private func tick(_ generation: Int) {
        state.withLock { state in
            guard state.running, state.generation == generation else { return }
            let line = Self.line(spinner: frames[state.frame % frames.count], label: label, progress: state.progress)
            state.frame += 1
            let visible = String(line.prefix(width))
            let padding = usesEscapes ? "\u{1B}[K" : String(repeating: " ", count: width - visible.count)
            Terminal.write("\r" + visible + padding, to: .standardError)
            state.drawn = true
        }
    }

    /// The status text: spinner, label, then the percentage (when the size is known) and bytes so far.
    static func line(spinner: String, label: String, progress: DownloadProgress?) -> String {
        var text = "\(spinner) \(label)"
        if let progress {
            if let fraction = progress.fraction { text += "  \(Int(fraction * 100))%" }
            text += " \(byteCount(progress.receivedBytes))"
        }
        return text
    }

    /// `512 B`, `123 KB`, `4.5 MB` (binary multiples, as terminals' download tools show them).
    static func byteCount(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1024 * 1024 { return "\(bytes / 1024) KB" }
        let tenths = bytes * 10 / (1024 * 1024)
        return "\(tenths / 10).\(tenths % 10) MB"
    }
}
