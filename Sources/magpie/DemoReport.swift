import Foundation
import Magpie

/// The demo's closing summary: a table per layer, the sharing counts, the errors, and whatever
/// did not go as the demo expects (those make it exit 1).
struct DemoReport {
    let layers: [DemoLedger.Layer]
    let originRequests: Int
    let originBytes: Int
    let dedupeHits: Int
    let coalesced: Int
    let failedFast: Int
    let processingRuns: Int
    let failures: [(name: String, error: MagpieError)]
    let thumbnails: [String]
    let problems: [String]

    init(run: DemoRun, managers: [ImageManager], thumbnails: [String]) {
        let downloads = run.downloader.statistics
        let joined = managers.reduce(0) { $0 + $1.statistics.coalesced }
        layers = run.ledger.layers(downloadedBytes: downloads.bytesReceived, joined: joined)
        originRequests = run.origin.totalRequests
        originBytes = run.origin.bodyBytesSent
        dedupeHits = downloads.dedupeHits
        coalesced = managers.reduce(0) { $0 + $1.statistics.coalesced }
        failedFast = managers.reduce(0) { $0 + $1.statistics.failedFast }
        processingRuns = managers.reduce(0) { $0 + $1.statistics.processingRuns }
        failures = run.ledger.failures
        self.thumbnails = thumbnails
        problems = Self.problems(run: run, thumbnails: thumbnails)
    }

    /// What went differently from the plan: only the corrupt sample may fail, and it must.
    private static func problems(run: DemoRun, thumbnails: [String]) -> [String] {
        var problems: [String] = []
        let corrupt = Set(run.samples.filter(\.isCorrupt).map(\.name))
        for (name, error) in run.ledger.failures where !corrupt.contains(name) {
            problems.append("\(name) failed: \(error)")
        }
        for name in corrupt where !run.ledger.failures.contains(where: { $0.name == name }) {
            problems.append("\(name) is corrupt but did not fail")
        }
        let expected = run.samples.count - corrupt.count
        if thumbnails.count != expected { problems.append("\(thumbnails.count) thumbnails written, expected \(expected)") }
        let memory = run.tally(.memory), disk = run.tally(.disk)
        if memory.memory != expected - 1 { problems.append("\(memory.memory) memory hits in step 3, expected \(expected - 1)") }
        if disk.disk != expected - 1 { problems.append("\(disk.disk) disk hits in step 4, expected \(expected - 1)") }
        return problems
    }

    func lines(style: TextStyle, ms: Double) -> [String] {
        var table = TextTable("answered by", "retrievals", "bytes", "avg time")
        for layer in layers {
            let hasBytes = ["memory", "disk", "network"].contains(layer.name)
            table.add(layer.name, "\(layer.retrievals)", hasBytes ? Units.bytes(layer.bytes) : "-",
                      layer.averageMs.map(Units.milliseconds) ?? "-")
        }
        table.add("total", "\(layers.reduce(0) { $0 + $1.retrievals })", "", "")
        var lines = [""] + table.render(style: style)
        lines.append("each retrieval counted once, where it ended; memory/disk bytes: decoded pixels served; "
            + "network bytes: response bodies received (a shared download counts once)")
        lines.append("origin: \(originRequests) requests, \(Units.bytes(originBytes)) sent; downloader dedupe: \(dedupeHits) callers "
            + "joined a running download; coalesced: \(coalesced) callers joined a running retrieval; "
            + "\(processingRuns) processing runs; failed fast (known-bad URL, no request): \(failedFast)")
        for failure in failures {
            lines.append(style.yellow("error") + " \(failure.name): \(failure.error)")
        }
        lines.append(problems.isEmpty
            ? style.green("done") + " in \(Units.milliseconds(ms)): every step did what it should"
            : style.red("unexpected") + ": \(problems.count) problem(s), see below")
        return lines
    }

    func json(ms: Double) -> [String: Any?] {
        var layerObjects: [String: Any] = [:]
        for layer in layers {
            let key = layer.name.split(separator: " ").first.map(String.init) ?? layer.name
            layerObjects[key] = [
                "retrievals": layer.retrievals, "bytes": layer.bytes,
                "avgMs": layer.averageMs.map { ($0 * 1000).rounded() / 1000 } as Any? ?? NSNull(),
            ]
        }
        return [
            "answeredBy": layerObjects, "originRequests": originRequests, "dedupeHits": dedupeHits, "coalesced": coalesced,
            "failedFast": failedFast, "processingRuns": processingRuns,
            "errors": failures.map { ["name": $0.name, "error": "\($0.error)"] },
            "thumbnails": thumbnails.count, "problems": problems, "ms": (ms * 10).rounded() / 10,
        ]
    }
}
