import Testing

@testable import magpie

/// `magpie serve` names the library's swift-metrics instruments as Prometheus allows. Only the sanitizer is checked
/// here: the registry bootstraps the global `MetricsSystem`, which this process leaves alone (other tests use
/// MetricsTestKit); ServeCommandTests reads the real `/metrics`.
struct LibraryMetricsTests {
    @Test func labelsAndDimensionNamesBecomeValidPrometheusNamesAndValuesStay() {
        let (name, dimensions) = LibraryMetrics.sanitized(
            "http.client-requests:total", [("status.code", "2.x"), ("9lives", "a b"), ("downloader", "magpie.server")])
        #expect(name == "http_client_requests:total")
        #expect(dimensions.map(\.0) == ["status_code", "_lives", "downloader"])
        #expect(dimensions.map(\.1) == ["2.x", "a b", "magpie.server"])
        #expect(LibraryMetrics.sanitized("magpie_download_requests_total", []).0 == "magpie_download_requests_total")
        #expect(LibraryMetrics.sanitized("1é", []).0 == "__")
        #expect(LibraryMetrics.sanitized("x", [("a:b", "")]).1.map(\.0) == ["a_b"])
        #expect(LibraryMetrics.sanitized("", []).0 == "_")
    }
}
