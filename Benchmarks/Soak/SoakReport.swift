import Foundation

/// One run of `magpie prefetch` as the report shows it.
struct RunRecord: Sendable {
    let round: Int
    let urls: Int
    let lines: Int
    /// The small first run whose time sized the others.
    let calibration: Bool
    let result: ChildResult
    /// Excluded from the checks: killed on purpose.
    var counted: Bool { !result.killedOnPurpose }
}

/// What `magpie cache verify --decode --json` said after the last run.
struct VerifyRecord: Sendable {
    var checked = 0, intact = 0, damaged = 0, orphans = 0, temporaryFiles = 0
    var exitStatus: Int32?
    var problems: [String] = []
}

/// Everything the Markdown section is made of.
struct SoakSummary {
    var seconds: Int
    var wallTime: Duration = .zero
    var runs: [RunRecord] = []
    var tallies: [String: KindTally] = [:]
    var violations: [String] = []
    var errors = 0
    var errorsNamingURL = 0
    var verify = VerifyRecord()
    /// Temporary files in the cache right after the deliberate SIGKILL, and after the next process opened it.
    var temporaryAfterKill: Int?
    var temporaryAfterReopen: Int?
    /// The deliberate SIGKILL landed while a temporary file existed (a cache write in progress).
    var killCaughtWrite = false
    var rssLimit: Int

    /// Most KiB of peak RSS a run may add per URL of its batch (see ``memoryGrowth``).
    var rssPerURLLimit: Double

    var passed: Bool { violations.isEmpty }

    /// Peak RSS added per URL between the smallest and the largest counted batch. A prefetch bounded by its
    /// concurrency shows about 0; one that keeps something per URL grows with the list however long it runs,
    /// which fixed-size runs compared with each other never show. Nil unless the batches differ by at least
    /// 4× and 1,000 URLs: a few 50 MB bodies in flight together move a peak by 100 MB or so.
    var memoryGrowth: (small: RunRecord, large: RunRecord, kibPerURL: Double)? {
        let counted = runs.filter { $0.counted && !$0.result.hung }
        guard let small = counted.min(by: { $0.urls < $1.urls }), let large = counted.max(by: { $0.urls < $1.urls }),
            large.urls >= 4 * small.urls, large.urls - small.urls >= 1000
        else { return nil }
        return (small, large, Double(large.result.peakRSS - small.result.peakRSS) / 1024 / Double(large.urls - small.urls))
    }

    /// The `### Hostile-input soak` section.
    func markdown(command: String, processor: String) -> String {
        let counted = runs.filter(\.counted)
        // Peaks compare between batches of one size: the calibration run's is listed, not ranked.
        let full = counted.filter { !$0.calibration }.isEmpty ? counted : counted.filter { !$0.calibration }
        let peaks = full.map(\.result.peakRSS).sorted()
        let hangs = runs.filter(\.result.hung).count
        var out: [String] = ["### Hostile-input soak", ""]
        out.append("`\(command)`: `magpie prefetch --list - --concurrency 32 --timeout 3 --processor \(processor) --json` run back to back "
            + "on batches that mix valid images with every misbehaviour of MagpieOrigin (served from the soak's own process), "
            + "then `magpie cache verify --decode --json`. \(ProcessInfo.processInfo.activeProcessorCount) cores, "
            + "measured on \(Self.date()); load average at the end: \(Self.loadAverage()).")
        out.append("")
        let killed = runs.count - counted.count
        out.append("- Duration: \(Self.seconds(wallTime)) s (asked \(seconds) s); runs: \(runs.count) (\(killed) killed with SIGKILL mid-way on purpose, not counted); "
            + "URLs checked: \(counted.reduce(0) { $0 + $1.urls }) unique, fed as \(counted.reduce(0) { $0 + $1.lines }) lines (repeats deduplicated by the CLI).")
        out.append("- Hangs (watchdog kills at 3× the expected run time): \(hangs). Exit statuses: "
            + Dictionary(grouping: counted, by: { $0.result.exitStatus.map { "\($0)" } ?? "signal \($0.result.signal ?? 0)" })
                .sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value.count)" }.joined(separator: ", ") + ".")
        if !peaks.isEmpty {
            let first = full.first!.result.peakRSS, last = full.last!.result.peakRSS
            out.append("- Peak RSS per full-size run: min \(Self.mib(peaks.first!)), median \(Self.mib(peaks[peaks.count / 2])), max \(Self.mib(peaks.last!)) "
                + "(limit \(Self.mib(rssLimit))); overall \(Self.mib(runs.map(\.result.peakRSS).max() ?? 0)). "
                + "First full-size run \(Self.mib(first)), last \(Self.mib(last)) (\(Self.percent(Double(last) / Double(max(1, first)) - 1))).")
        }
        if let growth = memoryGrowth {
            out.append("- Peak RSS against batch size: \(growth.small.urls) URLs \(Self.mib(growth.small.result.peakRSS)), "
                + "\(growth.large.urls) URLs \(Self.mib(growth.large.result.peakRSS)): " + String(format: "%+.0f", growth.kibPerURL)
                + " KiB per URL (limit \(Int(rssPerURLLimit))).")
        } else {
            out.append("- Peak RSS against batch size: not measured (the batches were too alike in size; a longer soak has them).")
        }
        out.append("- Errors that name their URL: \(errorsNamingURL) of \(errors).")
        out.append("- Cache afterwards: \(verify.checked) entries, \(verify.intact) intact, \(verify.damaged) damaged, \(verify.orphans) orphans, "
            + "\(verify.temporaryFiles) temporary files (exit status \(verify.exitStatus.map { "\($0)" } ?? "none")). "
            + "The run SIGKILLed on purpose (\(killCaughtWrite ? "while a cache write was in progress" : "no write in progress was caught")) "
            + "left \(temporaryAfterKill.map { "\($0)" } ?? "?") temporary file(s); after the next open: \(temporaryAfterReopen.map { "\($0)" } ?? "?").")
        out += ["", "| Run | URLs | Time (s) | Exit | Peak RSS | Note |", "|---:|---:|---:|---:|---:|---|"]
        for run in runs {
            let note = run.result.killedOnPurpose ? "SIGKILL on purpose after \(run.result.stdout.split(separator: 0x0A).count) outcomes"
                : run.result.hung ? "HANG" : run.calibration ? "calibration (sizes the others)" : ""
            out.append("| \(run.round) | \(run.urls) | \(Self.seconds(run.result.duration)) | \(run.result.exitStatus.map { "\($0)" } ?? "signal \(run.result.signal ?? 0)") | \(Self.mib(run.result.peakRSS)) | \(note) |")
        }
        out += ["", "| Kind | Expected | URLs | Succeeded | Typed errors | Unexpected |", "|---|---|---:|---:|---:|---:|"]
        for kind in SoakKind.all where tallies[kind.name] != nil {
            let tally = tallies[kind.name] ?? KindTally()
            out.append("| \(kind.name) | \(kind.expectation.label) | \(tally.urls) | \(tally.succeeded) | \(tally.typedErrors) | \(tally.unexpected) |")
        }
        out += ["", "Error reasons (URLs removed), most frequent first:", "", "| Kind | Reason | Count |", "|---|---|---:|"]
        let reasons = SoakKind.all.flatMap { kind in (tallies[kind.name]?.reasons ?? [:]).map { (kind.name, $0.key, $0.value) } }
        for (kind, reason, count) in reasons.sorted(by: { $0.2 != $1.2 ? $0.2 > $1.2 : ($0.0, $0.1) < ($1.0, $1.1) }).prefix(30) {
            out.append("| \(kind) | \(reason.replacingOccurrences(of: "|", with: "\\|")) | \(count) |")
        }
        out.append("")
        if passed {
            out.append("**Verdict: PASS**: every URL ended in one outcome of the expected kind, no hang, the cache verifies clean.")
        } else {
            out.append("**Verdict: FAIL**: \(violations.count) violation(s):")
            out.append("")
            out += violations.prefix(40).map { "- " + $0.replacingOccurrences(of: "\n", with: " ") }
            if violations.count > 40 { out.append("- … and \(violations.count - 40) more") }
        }
        return out.joined(separator: "\n")
    }

    static func mib(_ bytes: Int) -> String { String(format: "%.0f MiB", Double(bytes) / 1_048_576) }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    static func percent(_ fraction: Double) -> String { String(format: "%+.0f%%", fraction * 100) }

    /// The 1, 5 and 15 minute load averages from /proc/loadavg, or "unknown".
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func date() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date())
    }
}
