import Foundation
import Synchronization

/// Progress of a batch of items on standard error: on a terminal, one line redrawn in place
/// (`[#####-----]  45/100  12.3/s  ETA 4s  2 failed`, at most ten times a second); elsewhere,
/// plain lines at most once a second (`prefetch: 45/100 done, 2 failed, 12.3/s`) so logs stay readable.
final class ProgressBar: Sendable {
    /// How one item ended.
    enum Outcome: Sendable { case completed, skipped, failed }

    private struct State {
        var completed = 0
        var skipped = 0
        var failed = 0
        var lastDrawn: ContinuousClock.Instant?
        /// How many items were done when the last line was drawn.
        var lastDrawnDone = -1
        /// True while the bar's line is on screen without a newline after it.
        var shown = false
        var finished = false

        var done: Int { completed + skipped + failed }
    }

    let total: Int
    let title: String
    let stream: Terminal.Stream
    let style: TextStyle
    /// True: redraw one line in place; false: print plain lines.
    let interactive: Bool
    private let started = ContinuousClock.now
    private let state = Mutex(State())

    /// A bar for `total` items, drawn on `stream` (in place when `interactive`).
    init(total: Int, title: String, stream: Terminal.Stream = .standardError, style: TextStyle,
         interactive: Bool = Terminal.isTTY(.standardError)) {
        self.total = max(0, total)
        self.title = title
        self.stream = stream
        self.style = style
        self.interactive = interactive
        if interactive { state.withLock { draw(&$0, final: false) } }
    }

    /// Counts one finished item and redraws when the last drawing is old enough.
    func record(_ outcome: Outcome) {
        state.withLock { state in
            guard !state.finished else { return }
            switch outcome {
            case .completed: state.completed += 1
            case .skipped: state.skipped += 1
            case .failed: state.failed += 1
            }
            let interval: Duration = interactive ? .milliseconds(100) : .seconds(1)
            let last = state.lastDrawn ?? (interactive ? nil : started)
            if last.map({ ContinuousClock.now - $0 >= interval }) ?? true { draw(&state, final: false) }
        }
    }

    /// Draws the final state (ending the line on a terminal). Later calls do nothing.
    func finish() {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            // A plain line already showing the final count is not repeated.
            if interactive || state.lastDrawnDone != state.done { draw(&state, final: true) }
            if interactive { Terminal.write("\n", to: stream) }
            state.shown = false
        }
    }

    /// Writes `line` (a newline is added) to `target` without tearing the bar: when both share a
    /// terminal, the bar is cleared first and drawn again below the line.
    func write(line: String, to target: Terminal.Stream) {
        state.withLock { state in
            let sharesScreen = interactive && state.shown && target != stream && Terminal.isTTY(target)
            if sharesScreen { Terminal.write("\r\u{1B}[K", to: stream) }
            Terminal.write(line + "\n", to: target)
            if sharesScreen { draw(&state, final: false) }
        }
    }

    /// The counts so far.
    var counts: (completed: Int, skipped: Int, failed: Int) {
        state.withLock { ($0.completed, $0.skipped, $0.failed) }
    }

    // MARK: Drawing

    private func draw(_ state: inout State, final: Bool) {
        state.lastDrawn = .now
        state.lastDrawnDone = state.done
        let elapsed = Units.ms(ContinuousClock.now - started) / 1000
        let rate = elapsed > 0.05 || (final && elapsed > 0) ? Double(state.done) / elapsed : 0
        if interactive {
            Terminal.write("\r\u{1B}[K" + barLine(state, rate: rate, elapsed: elapsed, final: final), to: stream)
            state.shown = true
        } else {
            var line = "\(title): \(state.done)/\(total) done"
            if state.failed > 0 { line += ", \(state.failed) failed" }
            Terminal.write(line + ", " + String(format: "%.1f/s", rate) + "\n", to: stream)
        }
    }

    /// `title [####----]  done/total  rate/s  ETA 4s  2 failed`, fitted to the terminal's width
    /// (the bar shrinks, then goes; a wrapped line could not be redrawn in place).
    private func barLine(_ state: State, rate: Double, elapsed: Double, final: Bool) -> String {
        // Fixed widths, so the bar does not jump as the numbers grow.
        let counts = Self.padded("\(state.done)", to: "\(total)".count) + "/\(total)"
        let speed = Self.padded(String(format: "%.1f/s", rate), to: 8)
        var timing: String
        if final {
            timing = "in " + Self.duration(elapsed)
        } else if rate > 0, state.done < total {
            timing = "ETA " + Self.duration(Double(total - state.done) / rate)
        } else {
            timing = "ETA --"
        }
        timing = timing.padding(toLength: max(timing.count, 10), withPad: " ", startingAt: 0)
        let failed = state.failed > 0 ? "  \(state.failed) failed" : ""
        let tail = "  \(counts)  \(speed)  \(timing)\(failed)"
        let available = Terminal.columns(of: stream) - 1
        let barWidth = min(40, available - title.count - 3 - tail.count)
        let styledTail = "  " + style.bold(counts) + "  \(speed)  \(timing)" + (state.failed > 0 ? "  " + style.red("\(state.failed) failed") : "")
        guard barWidth >= 5 else {
            let plain = "\(title)\(tail)"
            return plain.count <= available ? style.cyan(title) + styledTail : String(plain.prefix(max(0, available)))
        }
        let filled = total == 0 ? barWidth : barWidth * state.done / total
        let bar = style.green(String(repeating: "#", count: filled)) + style.dim(String(repeating: "-", count: barWidth - filled))
        return style.cyan(title) + " [" + bar + "]" + styledTail
    }

    private static func padded(_ text: String, to width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// `4s`, `2m05s`, `1h02m`.
    private static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "--" }
        if seconds < 10 { return String(format: "%.1fs", seconds) }
        let whole = Int(seconds.rounded())
        if whole < 3600 { return whole < 60 ? "\(whole)s" : String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, whole % 3600 / 60)
    }
}
