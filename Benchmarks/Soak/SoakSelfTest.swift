import Foundation

/// `magpie-soak --self-test`: feeds the checkers made-up output, right and then broken in one way at a time,
/// and fails unless the right output passes and every broken one is caught. Run by scripts/soak first, so a
/// checker that quietly accepts anything cannot make a soak pass.
enum SoakSelfTest {
    /// Each case's name and whether it behaved; all must be true.
    static func run() -> [(String, Bool)] {
        let batch = SoakBatch(round: 1, units: 1, baseURL: "http://127.0.0.1:1")
        let good = lines(for: batch)
        var results: [(String, Bool)] = [("right output passes", violations(good, batch).isEmpty)]
        let valid = batch.urls.first { $0.kind.isValid }!.url
        let hostile = batch.urls.first { !$0.kind.isValid && $0.kind.name != "flaky" }!.url
        let broken: [(String, [String], Int32)] = [
            ("a missing URL line", good.filter { !$0.contains("\"\(valid)\"") }, 1),
            ("a URL reported twice", good + [good[0]], 1),
            ("a URL not in the batch", [outcome(url: "http://127.0.0.1:1/img/extra.png", failed: false)] + good, 1),
            ("a valid URL that failed", replace(valid, in: good, failed: true, error: "request failed: timed out after 3 s: \(valid)"), 1),
            ("a hostile URL that succeeded", replace(hostile, in: good, failed: false, error: nil), 1),
            ("a hostile URL with the wrong error", replace(hostile, in: good, failed: true, error: "something else from \(hostile)"), 1),
            ("a failure without an error text", replace(hostile, in: good, failed: true, error: ""), 1),
            ("no summary line", Array(good.dropLast()), 1),
            ("a summary that does not add up", Array(good.dropLast()) + [#"{"completed":0,"failed":1,"ms":1,"skipped":0}"#], 1),
            ("exit status 0 with failures", good, 0),
            ("a line that is not JSON", good + ["prefetch: 3 completed"], 1),
        ]
        for (name, output, status) in broken {
            results.append(("catches " + name, !violations(output, batch, status: status).isEmpty))
        }
        results += verifyCases()
        return results
    }

    /// Output as `magpie prefetch --json` would print it when every URL ends as its kind expects.
    private static func lines(for batch: SoakBatch) -> [String] {
        var failed = 0
        var lines: [String] = []
        for item in batch.urls {
            switch item.kind.expectation {
            case .success:
                lines.append(outcome(url: item.url, failed: false))
            case .failure(let texts), .either(let texts):
                failed += 1
                lines.append(outcome(url: item.url, failed: true, error: "bad response: \(texts[0]) from \(item.url)"))
            }
        }
        lines.append(#"{"completed":\#(batch.urls.count - failed),"failed":\#(failed),"ms":10,"skipped":0}"#)
        return lines
    }

    private static func outcome(url: String, failed: Bool, error: String? = nil) -> String {
        var object: [String: Any] = ["url": url, "status": failed ? "failed" : "completed", "ms": 1]
        if failed { object["error"] = error ?? "" } else { object["width"] = 1; object["height"] = 1 }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    private static func replace(_ url: String, in lines: [String], failed: Bool, error: String?) -> [String] {
        lines.map { $0.contains("\"\(url)\"") ? outcome(url: url, failed: failed, error: error) : $0 }
    }

    private static func violations(_ lines: [String], _ batch: SoakBatch, status: Int32 = 1) -> [String] {
        SoakChecker.check(result(stdout: lines.joined(separator: "\n") + "\n", status: status), batch: batch).violations
    }

    private static func verifyCases() -> [(String, Bool)] {
        let clean = #"{"checked":3,"intact":3,"damaged":0,"orphans":0,"temporaryFiles":0,"damagedEntries":[],"orphanFiles":[]}"#
        let damaged = #"{"checked":3,"intact":2,"damaged":1,"orphans":0,"temporaryFiles":0,"damagedEntries":[{"key":"k","file":"f","reason":"missing file"}],"orphanFiles":[]}"#
        let orphan = #"{"checked":3,"intact":3,"damaged":0,"orphans":1,"temporaryFiles":0,"damagedEntries":[],"orphanFiles":["entries/00/00"]}"#
        func caught(_ text: String, _ status: Int32) -> Bool {
            var found: [String] = []
            _ = VerifyParser.parse(result(stdout: text, status: status), into: &found)
            return !found.isEmpty
        }
        return [
            ("a clean cache passes", !caught(clean, 0)),
            ("catches a damaged entry", caught(damaged, 1)),
            ("catches an orphan", caught(orphan, 0)),
            ("catches a verify that printed nothing", caught("", 1)),
        ]
    }

    private static func result(stdout: String, status: Int32) -> ChildResult {
        ChildResult(
            exitStatus: status, signal: nil, stdout: Data(stdout.utf8), stderrTail: "", duration: .seconds(1), peakRSS: 0,
            sampledRSS: 0, hung: false, killedOnPurpose: false, killedWithFileOpen: false)
    }
}
