import MagpieCore
import Metrics
import Synchronization

/// What one downloader has done since it was created.
public struct DownloadStatistics: Sendable, Equatable {
    /// HTTP requests sent (each redirect and retry counts).
    public var requestsSent = 0
    /// Callers that joined an exchange (or, for `downloadImage`, a decode of one) already running for the same request.
    public var dedupeHits = 0
    /// Exchanges that ended with data (or a 304).
    public var succeeded = 0
    /// Exchanges that ended with an error other than cancellation.
    public var failed = 0
    /// Exchanges cancelled because every caller cancelled.
    public var cancelled = 0
    /// Retries made.
    public var retries = 0
    /// Body bytes of successful exchanges.
    public var bytesReceived = 0
    /// `304 Not Modified` answers to conditional requests.
    public var notModified = 0
    /// Bodies written to a file as they arrived (past ``ImageDownloader/Configuration/bodyFileThreshold``).
    public var spooledBodies = 0
    /// Interrupted bodies completed with a `206 Partial Content` answer to `Range` + `If-Range`.
    public var resumedBodies = 0
}

/// Keeps `DownloadStatistics` and mirrors them to swift-metrics (`magpie_download_*`, dimension
/// `downloader`; responses also by `status` class: 1xx…5xx). Instruments are made at creation,
/// so a factory scoped with `withMetricsFactory` around the downloader's init is the one used.
final class DownloadCounters: Sendable {
    private let stats = Mutex(DownloadStatistics())
    private let responses: [Counter]
    private let requests: Counter
    private let dedupe: Counter
    private let bytes: Counter
    private let failures: Counter
    private let retriesCounter: Counter
    private let duration: Metrics.Timer

    init(downloader: String) {
        let dimensions = [("downloader", downloader)]
        responses = (1...5).map { Counter(label: "magpie_download_responses_total", dimensions: dimensions + [("status", "\($0)xx")]) }
        requests = Counter(label: "magpie_download_requests_total", dimensions: dimensions)
        dedupe = Counter(label: "magpie_download_dedupe_hits_total", dimensions: dimensions)
        bytes = Counter(label: "magpie_download_bytes_total", dimensions: dimensions)
        failures = Counter(label: "magpie_download_failures_total", dimensions: dimensions)
        retriesCounter = Counter(label: "magpie_download_retries_total", dimensions: dimensions)
        duration = Metrics.Timer(label: "magpie_download_duration", dimensions: dimensions)
    }

    var snapshot: DownloadStatistics { stats.withLock { $0 } }

    func requestSent() {
        stats.withLock { $0.requestsSent += 1 }
        requests.increment()
    }

    func responseReceived(status: Int) {
        responses[min(4, max(0, status / 100 - 1))].increment()
    }

    func dedupeHit() {
        stats.withLock { $0.dedupeHits += 1 }
        dedupe.increment()
    }

    func spooled(resumed: Bool) {
        stats.withLock {
            if resumed { $0.resumedBodies += 1 } else { $0.spooledBodies += 1 }
        }
    }

    func retried() {
        stats.withLock { $0.retries += 1 }
        retriesCounter.increment()
    }

    func finished(_ result: Result<ImageDataResult, MagpieError>) {
        switch result {
        case .success(let value):
            stats.withLock {
                $0.succeeded += 1
                $0.bytesReceived += value.data.count
                if value.notModified { $0.notModified += 1 }
            }
            bytes.increment(by: value.data.count)
            duration.recordNanoseconds(value.metrics.total.components.seconds * 1_000_000_000 + value.metrics.total.components.attoseconds / 1_000_000_000)
        case .failure(let error) where error.isCancellation:
            stats.withLock { $0.cancelled += 1 }
        case .failure:
            stats.withLock { $0.failed += 1 }
            failures.increment()
        }
    }
}
