import Testing

@testable import Magpie

/// The AsyncHTTPClient settings a downloader builds its client with.
@Suite("ImageDownloader: HTTP client settings")
struct HTTPClientSettingsTests {
    @Test func withoutABootstrappedTracerTheClientOpensNoSpans() {
        // The test process bootstraps no tracer, so AsyncHTTPClient's default is the no-op one, which still costs
        // a span and its attributes per request.
        #expect(ImageDownloader.clientConfiguration(.init()).tracing.tracer == nil)
    }

    @Test func theConnectionPoolAllowsAsManyConnectionsPerHostAsDownloads() {
        var perHost = ImageDownloader.Configuration()
        perHost.maximumConcurrentDownloadsPerHost = 24
        #expect(ImageDownloader.clientConfiguration(perHost).connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit == 24)
    }
}
