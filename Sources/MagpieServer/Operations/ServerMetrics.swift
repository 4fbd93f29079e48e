import Magpie
import Metrics
import Prometheus
import Synchronization

/// The server's metrics, through swift-metrics into its own Prometheus registry (not the global `MetricsSystem`, so
/// several servers in one process, as in the tests, each count their own traffic). ``exposition()`` is `/metrics`.
public final class ServerMetrics: Sendable {
    /// The phases whose durations are histograms (`magpie_server_phase_seconds{phase=…}`).
    enum Phase: String, CaseIterable {
        case queue, download, decode, process, encode, total
    }

    /// The registry `/metrics` renders; an application may register its own metrics in it too.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let inFlight: Metrics.Gauge
    private let queued: Metrics.Gauge
    private let memoryResults: Metrics.Gauge
    private let bytesIn: Metrics.Counter
    private let bytesOut: Metrics.Counter
    // Handles made once: building one looks the metric up in the registry under its lock, every request.
    private let phases: [Phase: Metrics.Timer]
    private let layers: [String: Metrics.Counter]
    private let requests = Mutex<[RequestKey: Metrics.Counter]>([:])

    private struct RequestKey: Hashable {
        let route: String
        let status: Int
    }

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
        ]
        self.factory = factory
        inFlight = Metrics.Gauge(label: "magpie_server_jobs_in_flight", factory: factory)
        queued = Metrics.Gauge(label: "magpie_server_jobs_queued", factory: factory)
        memoryResults = Metrics.Gauge(label: "magpie_server_memory_cache_bytes", factory: factory)
        bytesIn = Metrics.Counter(label: "magpie_server_source_bytes_total", factory: factory)
        bytesOut = Metrics.Counter(label: "magpie_server_response_bytes_total", factory: factory)
        phases = Dictionary(uniqueKeysWithValues: Phase.allCases.map {
            ($0, Metrics.Timer(label: "magpie_server_phase_seconds", dimensions: [("phase", $0.rawValue)], factory: factory))
        })
        layers = Dictionary(uniqueKeysWithValues: ["memory", "disk", "original", "none"].map {
            ($0, Metrics.Counter(label: "magpie_server_cache_hits_total", dimensions: [("layer", $0)], factory: factory))
        })
    }

    func request(route: String, status: Int, bytesSent: Int) {
        let key = RequestKey(route: route, status: status)
        let counter = requests.withLock { known in
            if let counter = known[key] { return counter }
            let counter = Metrics.Counter(
                label: "magpie_server_requests_total", dimensions: [("route", route), ("status", String(status))], factory: factory)
            known[key] = counter
            return counter
        }
        counter.increment()
        if bytesSent > 0 { bytesOut.increment(by: Int64(bytesSent)) }
    }

    func phase(_ phase: Phase, _ duration: Duration) {
        phases[phase]?.recordNanoseconds(Int64(duration.components.seconds) * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// A request answered from `layer`: `memory`, `disk` (results), `original` (the source's bytes were cached),
    /// or `none` (downloaded).
    func cacheLayer(_ layer: String) {
        (layers[layer] ?? Metrics.Counter(label: "magpie_server_cache_hits_total", dimensions: [("layer", layer)], factory: factory))
            .increment()
    }

    func originError(_ kind: String) {
        Metrics.Counter(label: "magpie_server_origin_errors_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    func sourceBytes(_ count: Int) {
        if count > 0 { bytesIn.increment(by: Int64(count)) }
    }

    /// The Prometheus text exposition, with the gauges read now.
    func exposition(running: Int, waiting: Int, memoryBytes: Int) -> [UInt8] {
        inFlight.record(running)
        queued.record(waiting)
        memoryResults.record(memoryBytes)
        return registry.emitToBuffer()
    }
}
