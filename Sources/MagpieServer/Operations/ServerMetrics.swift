import Magpie
import Prometheus
import Synchronization

/// The server's metrics, in its own Prometheus registry (not the global `MetricsSystem`, so several servers in one
/// process, as in the tests, each count their own traffic), every family with its `# HELP` line; ``exposition(running:waiting:memoryBytes:)``
/// is `/metrics`, with the registries ``include(_:)`` added (the library's swift-metrics in `magpie serve`) and the
/// process's own `process_*` series after them.
public final class ServerMetrics: Sendable {
    /// The phases whose durations are histograms (`magpie_server_phase_seconds{phase=…}`).
    enum Phase: String, CaseIterable {
        case queue, download, decode, process, encode, total
    }

    /// The registry `/metrics` renders; an application may register its own metrics in it too.
    public let registry: PrometheusCollectorRegistry
    private let inFlight: Gauge
    private let queued: Gauge
    private let memoryResults: Gauge
    private let bytesIn: Counter
    private let bytesOut: Counter
    private let cancelledJobs: Counter
    private let abortedRequests: Counter
    private let headerTimeouts: Counter
    private let detections: [FaceDetector.Report.Outcome: Counter]
    private let detectionWait: DurationHistogram
    // Handles made once: building one looks the metric up in the registry under its lock, every request.
    private let phases: [Phase: DurationHistogram]
    private let layers: [String: Counter]
    private let requests = Mutex<[RequestKey: Counter]>([:])
    private let origins = Mutex<[String: Counter]>([:])
    private let included = Mutex<[PrometheusCollectorRegistry]>([])

    private struct RequestKey: Hashable {
        let route: String
        let status: Int
    }

    private static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
    ]

    init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        inFlight = registry.makeGauge(descriptor: Self.name("jobs_in_flight", help: "Processing jobs running now."), labels: [])
        queued = registry.makeGauge(descriptor: Self.name("jobs_queued", help: "Processing jobs waiting for a worker."), labels: [])
        memoryResults = registry.makeGauge(
            descriptor: Self.name("memory_cache_bytes", help: "Bytes of encoded results held in memory."), labels: [])
        bytesIn = registry.makeCounter(
            descriptor: Self.name("source_bytes", unit: "total", help: "Bytes downloaded from origins."), labels: [])
        bytesOut = registry.makeCounter(
            descriptor: Self.name("response_bytes", unit: "total", help: "Bytes of image and error bodies sent."), labels: [])
        cancelledJobs = registry.makeCounter(
            descriptor: Self.name(
                "jobs_cancelled", unit: "total", help: "Jobs stopped mid-way after their processing deadline answered 503."),
            labels: [])
        abortedRequests = registry.makeCounter(
            descriptor: Self.name(
                "requests_aborted", unit: "total",
                help: "Image requests whose connection was gone when their answer was ready (client left, shutdown timeout)."),
            labels: [])
        headerTimeouts = registry.makeCounter(
            descriptor: Self.name(
                "header_timeouts", unit: "total", help: "Connections closed because a request head took longer than --header-timeout."),
            labels: [])
        let detectionsName = Self.name(
            "face_detections", unit: "total",
            help: "Smart crops' face detections by outcome: faces, none, cached, over_budget (--face-budget passed; attention used), failed, busy, unavailable.")
        detections = Dictionary(uniqueKeysWithValues: FaceDetector.Report.Outcome.allCases.map {
            ($0, registry.makeCounter(descriptor: detectionsName, labels: [("outcome", $0.rawValue)]))
        })
        detectionWait = registry.makeDurationHistogram(
            descriptor: Self.name("face_detection", unit: "seconds", help: "How long smart crops waited for face detection."),
            labels: [], buckets: Self.buckets)
        let phaseName = Self.name("phase", unit: "seconds", help: "Time spent per request in each phase (total: the whole answer).")
        phases = Dictionary(uniqueKeysWithValues: Phase.allCases.map {
            ($0, registry.makeDurationHistogram(descriptor: phaseName, labels: [("phase", $0.rawValue)], buckets: Self.buckets))
        })
        layers = Dictionary(uniqueKeysWithValues: ["memory", "disk", "original", "none"].map {
            ($0, registry.makeCounter(descriptor: Self.cacheHitsName, labels: [("layer", $0)]))
        })
        registry.makeGauge(
            descriptor: Self.name("build_info", help: "Always 1; the labels say which Magpie this is."),
            labels: [("version", MagpieBuild.version), ("swift", Self.swiftVersion)]
        ).set(to: 1.0)
    }

    private static var cacheHitsName: MetricNameDescriptor {
        name(
            "cache_hits", unit: "total",
            help: "Image answers by where they came from: memory or disk (results), original (cached source bytes) or none (downloaded).")
    }
    private static var requestsName: MetricNameDescriptor {
        name("requests", unit: "total", help: "Image requests answered, by route and status.")
    }
    private static var originErrorsName: MetricNameDescriptor {
        name("origin_errors", unit: "total", help: "Source fetches that failed, by kind.")
    }

    private static func name(_ metric: String, unit: String = "", help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "magpie", subsystem: "server", metricName: metric, unitName: unit, helpText: help)
    }

    private static var swiftVersion: String {
        #if compiler(>=6.3)
            "6.3"
        #elseif compiler(>=6.2)
            "6.2"
        #elseif compiler(>=6.1)
            "6.1"
        #else
            "6.0"
        #endif
    }

    func request(route: String, status: Int, bytesSent: Int) {
        let key = RequestKey(route: route, status: status)
        let counter = requests.withLock { known in
            if let counter = known[key] { return counter }
            let counter = registry.makeCounter(descriptor: Self.requestsName, labels: [("route", route), ("status", String(status))])
            known[key] = counter
            return counter
        }
        counter.increment()
        if bytesSent > 0 { bytesOut.increment(by: Int64(bytesSent)) }
    }

    func phase(_ phase: Phase, _ duration: Duration) {
        phases[phase]?.record(duration)
    }

    /// A request answered from `layer`: `memory`, `disk` (results), `original` (the source's bytes were cached),
    /// or `none` (downloaded).
    func cacheLayer(_ layer: String) {
        (layers[layer] ?? registry.makeCounter(descriptor: Self.cacheHitsName, labels: [("layer", layer)])).increment()
    }

    func originError(_ kind: String) {
        origins.withLock { known in
            if let counter = known[kind] { return counter }
            let counter = registry.makeCounter(descriptor: Self.originErrorsName, labels: [("kind", kind)])
            known[kind] = counter
            return counter
        }.increment()
    }

    func sourceBytes(_ count: Int) {
        if count > 0 { bytesIn.increment(by: Int64(count)) }
    }

    /// A job that stopped because its deadline had answered for it.
    func jobCancelled() { cancelledJobs.increment() }

    /// One face detection call of a smart crop: its outcome and how long the crop waited.
    func faceDetection(_ report: FaceDetector.Report) {
        detections[report.outcome]?.increment()
        if report.outcome != .unavailable { detectionWait.record(report.duration) }
    }

    /// A request whose answer nobody received.
    func requestAborted() { abortedRequests.increment() }

    /// A connection closed for a request head that came too slowly.
    func headerTimedOut() { headerTimeouts.increment() }

    /// Adds `other`'s metrics to `/metrics`, after the server's own; adding a registry twice changes nothing.
    ///
    /// For metrics the server does not make: `magpie serve` bootstraps swift-metrics' `MetricsSystem` with a
    /// `PrometheusMetricsFactory` over a registry of its own and includes it here, so the library's counters
    /// (`magpie_download_*`, `magpie_cache_*`) are scraped with the server's. It stays a registry apart because the
    /// global `MetricsSystem` is the whole process's, while ``registry`` is this server's alone. Its family names must
    /// differ from the server's (`magpie_server_*`, `process_*`): each registry writes its own `# TYPE` lines.
    ///
    /// - Parameter other: A registry something else in the process fills.
    public func include(_ other: PrometheusCollectorRegistry) {
        included.withLock { registries in
            if other !== registry, !registries.contains(where: { $0 === other }) { registries.append(other) }
        }
    }

    /// The Prometheus text exposition, with the gauges read now, the included registries next and the process's own
    /// series last.
    func exposition(running: Int, waiting: Int, memoryBytes: Int) -> [UInt8] {
        inFlight.set(Int64(running))
        queued.set(Int64(waiting))
        memoryResults.set(Int64(memoryBytes))
        var buffer = registry.emitToBuffer()
        for other in included.withLock({ $0 }) { other.emit(into: &buffer) }
        ProcessMetrics.current().emit(into: &buffer)
        return buffer
    }
}
