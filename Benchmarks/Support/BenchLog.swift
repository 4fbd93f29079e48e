// Rows for scripts/bench's chart and targets table (Benchmarks/report.py), appended to the TSV
// file that MAGPIE_BENCH_RATIOS names; unset, nothing is written and the Markdown is the output.
import Foundation

/// Appends chart bars and target verdicts to `$MAGPIE_BENCH_RATIOS`, one tab-separated line each.
public enum BenchLog {
    /// A chart bar: Magpie's time divided by the peer's, so below 1 means Magpie is faster.
    public static func ratio(_ section: String, _ label: String, _ value: Double, note: String = "") {
        guard value.isFinite, value > 0 else { return }
        append(section, label, String(format: "%.4f", value), note)
    }

    /// A target verdict: the target's key (as Benchmarks/report.py lists it), what was measured,
    /// the value and the limit as text, and whether the value is within the limit.
    public static func target(_ key: String, _ subject: String, measured: String, limit: String, met: Bool) {
        target(key, subject, measured: measured, limit: limit, verdict: met ? "met" : "not met")
    }

    /// A target verdict given as text: "met", "not met", or "noisy" (alternated pairs that disagreed by 10 % or more,
    /// as scripts/magpie_scripts/pairs.py judges them).
    public static func target(_ key: String, _ subject: String, measured: String, limit: String, verdict: String) {
        append("target", key, subject, measured, limit, verdict)
    }

    private static func append(_ fields: String...) {
        guard let path = ProcessInfo.processInfo.environment["MAGPIE_BENCH_RATIOS"], !path.isEmpty else { return }
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let file = FileHandle(forWritingAtPath: path) else { return }
        defer { try? file.close() }
        let clean = fields.map { $0.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " ") }
        _ = try? file.seekToEnd()
        try? file.write(contentsOf: Data((clean.joined(separator: "\t") + "\n").utf8))
    }
}
