import Metrics
import Prometheus

/// Where the library's swift-metrics instruments (`magpie_download_*` of ``ImageDownloader``, `magpie_cache_*` of
/// ``ImageCache``) are counted in `magpie serve`: a Prometheus registry of their own, which `/metrics` renders after
/// the server's (``ServerMetrics/include(_:)``).
///
/// The library writes to the global `MetricsSystem`, which only an executable may bootstrap (once per process); the
/// server keeps a registry per instance instead, so the two stay apart and are joined at the exposition.
enum LibraryMetrics {
    /// The registry, with `MetricsSystem` bootstrapped to write to it on first use. Read it before the server makes its
    /// downloader and caches: an instrument takes the factory in place when it is made, and keeps it.
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = sanitized
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    /// A swift-metrics label and its dimensions as Prometheus allows them. swift-metrics takes any text (`http.client`,
    /// `cache-name`), Prometheus names only `[A-Za-z_:][A-Za-z0-9_:]*` and label names `[A-Za-z_][A-Za-z0-9_]*`; each
    /// other character (a leading digit too) becomes `_`, so an instrument a dependency adds cannot make `/metrics`
    /// unreadable. Dimension values stay as they are: the exposition escapes them.
    static func sanitized(_ label: String, _ dimensions: [(String, String)]) -> (String, [(String, String)]) {
        (prometheusName(label, allowingColon: true), dimensions.map { (prometheusName($0.0, allowingColon: false), $0.1) })
    }

    private static func prometheusName(_ text: String, allowingColon: Bool) -> String {
        var name = ""
        for (index, scalar) in text.unicodeScalars.enumerated() {
            let letter = ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_" || (allowingColon && scalar == ":")
            let digit = ("0"..."9").contains(scalar)
            name.unicodeScalars.append(letter || (digit && index > 0) ? scalar : "_")
        }
        return name.isEmpty ? "_" : name
    }
}
