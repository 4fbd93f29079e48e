import Foundation

/// Outcome counts of one kind of URL over the whole soak.
struct KindTally: Sendable {
    var urls = 0
    var succeeded = 0
    /// Failed as expected: with an error of the expected kind.
    var typedErrors = 0
    /// Anything else: a valid URL that failed, a hostile one that succeeded, a wrong error, a missing outcome.
    var unexpected = 0
    /// Error reasons (URLs taken out) and how often each came.
    var reasons: [String: Int] = [:]

    mutating func merge(_ other: KindTally) {
        urls += other.urls
        succeeded += other.succeeded
        typedErrors += other.typedErrors
        unexpected += other.unexpected
        reasons.merge(other.reasons, uniquingKeysWith: +)
    }
}

/// What one run's output said and what was wrong with it.
struct RunCheck: Sendable {
    var tallies: [String: KindTally] = [:]
    var violations: [String] = []
    var failedCount = 0
    /// Errors that name the URL they are about (MagpieError descriptions should).
    var errorsNamingURL = 0
    var errors = 0
}

/// Checks `magpie prefetch --json` output against the batch it was given: one line per unique URL, the
/// right outcome per kind, a summary that adds up, and an exit status that agrees with it.
enum SoakChecker {
    static func check(_ result: ChildResult, batch: SoakBatch) -> RunCheck {
        var check = RunCheck()
        let round = "run \(batch.round)"
        let byURL = Dictionary(batch.urls.map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: [String: [String: Any]] = [:]
        var summary: [String: Any]?
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() where !line.isEmpty {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                check.violations.append("\(round): stdout line \(number + 1) is not a JSON object: \(line.prefix(200))")
                continue
            }
            guard let url = object["url"] as? String else {
                if summary != nil { check.violations.append("\(round): a second summary line: \(line.prefix(200))") }
                summary = object
                continue
            }
            if summary != nil { check.violations.append("\(round): a URL line after the summary: \(url)") }
            guard byURL[url] != nil else {
                check.violations.append("\(round): an outcome for a URL not in the batch: \(url)")
                continue
            }
            if seen[url] != nil { check.violations.append("\(round): two outcomes for \(url)") }
            seen[url] = object
        }
        for item in batch.urls {
            var tally = check.tallies[item.kind.name, default: KindTally()]
            tally.urls += 1
            defer { check.tallies[item.kind.name] = tally }
            guard let object = seen[item.url] else {
                tally.unexpected += 1
                check.violations.append("\(round): no outcome for \(item.url)")
                continue
            }
            let status = object["status"] as? String
            switch status {
            case "completed", "skipped":
                if case .failure = item.kind.expectation {
                    tally.unexpected += 1
                    check.violations.append("\(round): hostile URL \(status!): \(item.url)")
                } else {
                    tally.succeeded += 1
                }
            case "failed":
                check.failedCount += 1
                guard let error = object["error"] as? String, !error.isEmpty else {
                    tally.unexpected += 1
                    check.violations.append("\(round): failed without an error text: \(item.url)")
                    continue
                }
                check.errors += 1
                if error.contains(item.url) { check.errorsNamingURL += 1 }
                tally.reasons[reason(of: error), default: 0] += 1
                switch item.kind.expectation {
                case .success:
                    tally.unexpected += 1
                    check.violations.append("\(round): valid URL failed: \(item.url): \(error)")
                case .failure(let expected), .either(let expected):
                    if expected.contains(where: error.contains) {
                        tally.typedErrors += 1
                    } else {
                        tally.unexpected += 1
                        check.violations.append("\(round): \(item.kind.name) failed with another error than \(item.kind.expectation.label): \(item.url): \(error)")
                    }
                }
            default:
                tally.unexpected += 1
                check.violations.append("\(round): unknown status \(status ?? "none") for \(item.url)")
            }
        }
        checkSummary(summary, result: result, seen: seen.count, failed: check.failedCount, round: round, into: &check.violations)
        return check
    }

    private static func checkSummary(
        _ summary: [String: Any]?, result: ChildResult, seen: Int, failed: Int, round: String, into violations: inout [String]
    ) {
        guard let summary else {
            violations.append("\(round): no summary line")
            return
        }
        let counts = ["completed", "skipped", "failed"].map { summary[$0] as? Int }
        if counts.contains(where: { $0 == nil }) || !(summary["ms"] is NSNumber) {
            violations.append("\(round): the summary lacks completed, skipped, failed or ms: \(summary)")
        } else if counts.compactMap({ $0 }).reduce(0, +) != seen || counts[2] != failed {
            violations.append("\(round): the summary (\(summary)) does not add up to the \(seen) outcomes (\(failed) failed)")
        }
        if let status = result.exitStatus, status != (failed > 0 ? 1 : 0) {
            violations.append("\(round): exit status \(status) with \(failed) failed URLs")
        }
    }

    /// The error without its URLs and what follows them, so errors of one kind group together:
    /// `bad response: HTTP 503 from http://…` → `bad response: HTTP 503`.
    static func reason(of error: String) -> String {
        var text = error
        if let range = text.range(of: #"\s*(from |for |after )?:?\s*https?://\S+.*$"#, options: .regularExpression) {
            // A URL in the middle (a timeout names it last; a loop lists a chain): keep what precedes it.
            text = String(text[..<range.lowerBound])
        }
        text = text.replacingOccurrences(of: #"\d{4,}"#, with: "N", options: .regularExpression)
        return text.trimmingCharacters(in: CharacterSet(charactersIn: " :"))
    }
}
