import Foundation
import Magpie

/// What `prefetch` prints: a JSON object per finished URL (with `--json`), a progress bar on
/// stderr, and the summary on stdout.
struct PrefetchReport {
    let json: Bool
    let bar: ProgressBar
    let started: ContinuousClock.Instant
    /// Most errors listed under the human summary.
    static let listedErrors = 5

    private(set) var completed = 0
    private(set) var skipped = 0
    private(set) var failed = 0
    /// Repeated URLs left out of the run (each is prefetched once).
    var duplicates = 0
    private var cancelled = 0
    /// The listed failures' lines, each naming its URL once.
    private var errors: [(url: String, line: String)] = []
    private var unlistedErrors = 0

    init(json: Bool, bar: ProgressBar, started: ContinuousClock.Instant) {
        self.json = json
        self.bar = bar
        self.started = started
    }

    /// Reports one finished URL (`url` as the user wrote it).
    mutating func record(_ outcome: PrefetchOutcome, url: String) {
        switch outcome {
        case .completed(_, let result):
            completed += 1
            bar.record(.completed)
            emit(["url": url, "status": "completed", "ms": milliseconds(), "width": result.image.width, "height": result.image.height])
        case .skipped(_, let cacheType):
            skipped += 1
            bar.record(.skipped)
            emit(["url": url, "status": "skipped", "ms": milliseconds(), "cacheType": cacheType.rawValue])
        case .failed(_, let error):
            recordFailure(url: url, error: error)
        }
    }

    /// Reports a URL that failed, before or during the prefetch.
    mutating func recordFailure(url: String, error: MagpieError) {
        failed += 1
        bar.record(.failed)
        if error.isCancellation {
            cancelled += 1
        } else if errors.count < Self.listedErrors {
            errors.append((url, failureLine(for: url, error: error)))
        } else {
            unlistedErrors += 1
        }
        emit(["url": url, "status": "failed", "ms": milliseconds(), "error": "\(error)"])
    }

    /// Ends the bar and prints the summary: a JSON object with exactly `completed`, `skipped`,
    /// `failed`, `duplicates` and `ms`, or a line followed by the first errors.
    func finish(interrupted: Bool) {
        bar.finish()
        let ms = milliseconds()
        if json {
            emit(["completed": completed, "skipped": skipped, "failed": failed, "duplicates": duplicates, "ms": ms])
            return
        }
        let seconds = ms / 1000
        let rate = seconds > 0 ? Double(completed + skipped + failed) / seconds : 0
        var line = "prefetch: \(completed) completed, \(skipped) skipped, \(failed) failed"
            + (duplicates > 0 ? ", \(duplicates) duplicate URL(s) dropped" : "") + " in "
            + String(format: "%.1f s (%.1f/s)", seconds, rate)
        if interrupted { line += ", interrupted" + (cancelled > 0 ? ": \(cancelled) cancelled" : "") }
        var lines = [line] + errors.map { "  " + $0.line }
        if unlistedErrors > 0 { lines.append("  … and \(unlistedErrors) more error(s)") }
        for line in lines { bar.write(line: line, to: .standardOutput) }
    }

    /// Writes one JSON line to stdout (unbuffered, so a reader sees each URL as it finishes).
    private func emit(_ object: [String: Any?]) {
        guard json else { return }
        bar.write(line: jsonLine(object), to: .standardOutput)
    }

    /// Milliseconds since the prefetch started, to a tenth.
    private func milliseconds() -> Double {
        let ms = Units.ms(ContinuousClock.now - started)
        return (ms * 10).rounded() / 10
    }
}
