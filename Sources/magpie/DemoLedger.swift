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

    /// One row of the per-layer table.
    struct Layer: Sendable {
        let name: String
        var hits = 0
        var misses = 0
        var bytes = 0
        var totalMs = 0.0
        var timed = 0

        var averageMs: Double? { timed == 0 ? nil : totalMs / Double(timed) }

        mutating func hit(bytes: Int, ms: Double?) {
            hits += 1
            self.bytes += bytes
            if let ms {
                totalMs += ms
                timed += 1
            }
        }
    }

    /// Memory and disk: lookups that found the image or went on (bytes are decoded pixels served).
    /// Network: retrievals answered by a download (bytes come from the downloader, so a download
    /// shared by several callers counts once) or failing there. Revalidation: 304s against changes.
    func layers(downloadedBytes: Int) -> [Layer] {
        var memory = Layer(name: "memory"), disk = Layer(name: "disk"), network = Layer(name: "network")
        var revalidation = Layer(name: "revalidation (304)")
        for record in all {
            switch record.outcome {
            case .image(let cacheType, let revalidated, let bytes):
                // A revalidated hit's time is the conditional request's: it belongs to that row only.
                let lookupMs = revalidated ? nil : record.ms
                switch cacheType {
                case .memory: memory.hit(bytes: bytes, ms: lookupMs)
                case .disk:
                    memory.misses += 1
                    disk.hit(bytes: bytes, ms: lookupMs)
                case .none:
                    memory.misses += 1
                    disk.misses += 1
                    network.hit(bytes: 0, ms: record.ms)
                    // A revalidation that got a new body instead of a 304.
                    if record.phase == .revalidate { revalidation.misses += 1 }
                }
                if revalidated { revalidation.hit(bytes: 0, ms: record.ms) }
            case .skipped(let cacheType):
                if cacheType == .memory { memory.hits += 1 } else { memory.misses += 1; disk.hits += 1 }
            case .failed:
                memory.misses += 1
                disk.misses += 1
                network.misses += 1
            }
        }
        network.bytes = downloadedBytes
        return [memory, disk, network, revalidation]
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
