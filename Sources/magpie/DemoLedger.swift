import Magpie
import Synchronization

/// What one retrieval of the demo ended with.
struct DemoRecord: Sendable {
    enum Outcome: Sendable {
        /// An image, from `cacheType` (`.none`: downloaded), `revalidated` by a 304 or not.
        case image(cacheType: CacheType, revalidated: Bool, decodedBytes: Int)
        /// The prefetcher found it cached and did not retrieve it.
        case skipped(CacheType)
        /// A typed error.
        case failed(MagpieError)
    }

    let phase: DemoPhase
    let name: String
    let outcome: Outcome
    /// Wall time of the retrieval; nil when the phase could not time it (prefetcher outcomes).
    let ms: Double?
}

/// Every retrieval the demo made, and the per-layer figures they add up to.
final class DemoLedger: Sendable {
    private let records = Mutex<[DemoRecord]>([])

    func add(_ record: DemoRecord) { records.withLock { $0.append(record) } }

    var all: [DemoRecord] { records.withLock { $0 } }

    /// One row of the table: the retrievals one layer answered. Each retrieval is counted once, where it ended.
    struct Layer: Sendable {
        let name: String
        var retrievals = 0
        var bytes = 0
        var totalMs = 0.0
        var timed = 0

        var averageMs: Double? { timed == 0 ? nil : totalMs / Double(timed) }

        mutating func add(bytes: Int, ms: Double?) {
            retrievals += 1
            self.bytes += bytes
            if let ms {
                totalMs += ms
                timed += 1
            }
        }
    }

    /// Where each retrieval ended, counted once: memory, disk, its own download, another caller's retrieval it joined
    /// (`joined`, from the managers' statistics: their results look like downloads), a 304, or a failure. Memory and
    /// disk bytes are decoded pixels served; network bytes come from the downloader (a shared download counts once).
    func layers(downloadedBytes: Int, joined: Int) -> [Layer] {
        var memory = Layer(name: "memory"), disk = Layer(name: "disk"), network = Layer(name: "network")
        var shared = Layer(name: "joined a running retrieval"), revalidated = Layer(name: "revalidated (304)")
        var failed = Layer(name: "failed")
        for record in all {
            switch record.outcome {
            case .image(_, true, let bytes): revalidated.add(bytes: bytes, ms: record.ms)
            case .image(.memory, false, let bytes): memory.add(bytes: bytes, ms: record.ms)
            case .image(.disk, false, let bytes): disk.add(bytes: bytes, ms: record.ms)
            case .image(.none, false, _): network.add(bytes: 0, ms: record.ms)
            case .skipped(.memory): memory.retrievals += 1
            case .skipped: disk.retrievals += 1
            case .failed: failed.add(bytes: 0, ms: nil)
            }
        }
        let joinedNetwork = min(joined, network.retrievals)
        network.retrievals -= joinedNetwork
        shared.retrievals = joinedNetwork
        network.bytes = downloadedBytes
        return [memory, disk, network, shared, revalidated, failed]
    }

    /// The failures, first per name, in the order they happened.
    var failures: [(name: String, error: MagpieError)] {
        var seen = Set<String>()
        return all.compactMap { record in
            guard case .failed(let error) = record.outcome, seen.insert(record.name).inserted else { return nil }
            return (record.name, error)
        }
    }
}

/// The demo's steps, in order.
enum DemoPhase: Sendable {
    case prefetch, burst, memory, disk, revalidate
}
