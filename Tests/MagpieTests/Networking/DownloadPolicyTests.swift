import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

@Suite("ImageDownloader: modifiers, redirects, retries, limits, priority, revalidation")
struct DownloadPolicyTests {
    private func withOrigin(
        configuration: ImageDownloader.Configuration = .init(),
        _ body: (ImageOrigin, ImageDownloader) async throws -> Void
    ) async throws {
        try await OriginFixture.withOrigin(name: "policy", configuration: configuration, body)
    }

    // MARK: Rate limiting

    @Test func theRateLimiterLetsTheBurstStartAndHoldsTheNextRequest() async throws {
        var configuration = ImageDownloader.Configuration()
        // Two at once, then one every 1,000 s: the third request waits far longer than this test runs.
        configuration.rateLimiter = RateLimiter(requestsPerSecond: 0.001, burst: 2)
        try await withOrigin(configuration: configuration) { origin, downloader in
            for name in ["pic.png", "photo.jpg"] {
                _ = try await downloader.downloadData(with: URL(string: origin.url("/img/\(name)"))!)
            }
            let third = Task { try await downloader.downloadData(with: URL(string: origin.url("/img/noise.png"))!) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(origin.requestCount(path: "/img/noise.png") == 0)
            third.cancel()
            await #expect(throws: MagpieError.self) { _ = try await third.value }
            #expect(origin.requestCount(path: "/img/noise.png") == 0)
        }
    }

    // MARK: Request modifiers

    @Test func requestModifierAddsHeaders() async throws {
        try await withOrigin { origin, downloader in
            let options = ImageDownloadOptions(requestModifier: AnyModifier {
                var request = $0
                request.setValue("Bearer secret", forHeader: "Authorization")
                return request
            })
            _ = try await downloader.downloadData(with: URL(string: origin.url("/echo/pic.png"))!, options: options)
            let headers = origin.lastRequestHeaders(path: "/echo/pic.png")
            #expect(headers["authorization"] == "Bearer secret")
            #expect(headers["user-agent"]?.hasPrefix("Magpie/") == true)
        }
    }

    @Test func asyncModifierCanRewriteTheURL() async throws {
        try await withOrigin { origin, downloader in
            let options = ImageDownloadOptions(requestModifier: AsyncAnyModifier { request in
                try? await Task.sleep(for: .milliseconds(5))  // e.g. fetching a token
                return ImageRequest(url: URL(string: origin.url("/img/photo.jpg"))!)
            })
            let result = try await downloader.downloadImage(with: URL(string: origin.url("/img/missing.png"))!, options: options)
            #expect(result.image.pixelSize == PixelSize(width: 80, height: 60))
            #expect(origin.requestCount(path: "/img/missing.png") == 0)
        }
    }

    @Test func modifierReturningNilCancelsWithoutSending() async throws {
        try await withOrigin { origin, downloader in
            let url = URL(string: origin.url("/img/pic.png"))!
            let error = await magpieError {
                try await downloader.downloadData(with: url, options: ImageDownloadOptions(requestModifier: AnyModifier { _ in nil }))
            }
            #expect(error.map { if case .requestFailed(.cancelledByModifier(url)) = $0 { true } else { false } } == true)
            #expect(origin.totalRequests == 0)
        }
    }

    // MARK: Redirects

    @Test func redirectChainsAreFollowed() async throws {
        try await withOrigin { origin, downloader in
            let result = try await downloader.downloadImage(with: URL(string: origin.url("/redirect/3/pic.png"))!)
            #expect(result.metrics.redirectCount == 3)
            #expect(result.response?.url.path == "/redirect/0/pic.png")
            #expect(result.url.path == "/redirect/3/pic.png")
        }
    }

    @Test func redirectCountIsCapped() async throws {
        var configuration = ImageDownloader.Configuration()
        configuration.maximumRedirects = 2
        try await withOrigin(configuration: configuration) { origin, downloader in
            _ = try await downloader.downloadData(with: URL(string: origin.url("/redirect/2/pic.png"))!)
            let error = await magpieError { try await downloader.downloadData(with: URL(string: origin.url("/redirect/3/pic.png"))!) }
            guard case .requestFailed(.tooManyRedirects(_, let chain)) = error else {
                Issue.record("expected tooManyRedirects, got \(String(describing: error))")
                return
            }
            #expect(chain.count == 4)
        }
    }

    @Test func redirectLoopIsDetected() async throws {
        try await withOrigin { origin, downloader in
            let error = await magpieError { try await downloader.downloadData(with: URL(string: origin.url("/loop/a"))!) }
            guard case .requestFailed(.redirectLoop(_, let chain)) = error else {
                Issue.record("expected redirectLoop, got \(String(describing: error))")
                return
            }
            #expect(chain.map(\.path) == ["/loop/a", "/loop/b", "/loop/a"])
            #expect(origin.requestCount(path: "/loop/a") == 1)
        }
    }

    @Test func redirectHandlerCanRefuseOrChangeTheTarget() async throws {
        try await withOrigin { origin, downloader in
            let refuse = ImageDownloadOptions(redirectHandler: AnyRedirectHandler { _, _ in nil })
            let error = await magpieError { try await downloader.downloadData(with: URL(string: origin.url("/redirect/1/pic.png"))!, options: refuse) }
            #expect(error.map { if case .requestFailed(.redirectRefused) = $0 { true } else { false } } == true)

            let change = ImageDownloadOptions(redirectHandler: AnyRedirectHandler { response, request in
                #expect(response.statusCode == 302)
                #expect(request.url.path == "/redirect/0/pic.png")
                return ImageRequest(url: URL(string: origin.url("/img/photo.jpg"))!)
            })
            let result = try await downloader.downloadImage(with: URL(string: origin.url("/redirect/1/pic.png"))!, options: change)
            #expect(result.image.pixelSize == PixelSize(width: 80, height: 60))
        }
    }

    // MARK: Retries

    @Test func transientFailuresAreRetriedUntilSuccess() async throws {
        try await withOrigin { origin, downloader in
            let strategy = DelayRetryStrategy(maxRetryCount: 3, retryInterval: .seconds(0.01))
            let url = URL(string: origin.url("/flaky/pic.png?failures=2&code=503"))!
            let result = try await downloader.downloadData(with: url, options: ImageDownloadOptions(retryStrategy: strategy))
            #expect(result.metrics.retryCount == 2)
            #expect(origin.requestCount(path: "/flaky/pic.png") == 3)
        }
    }

    @Test func retriesStopAtTheMaximumWithTheLastError() async throws {
        try await withOrigin { origin, downloader in
            let strategy = DelayRetryStrategy(maxRetryCount: 2, retryInterval: .accumulated(0.01))
            let url = URL(string: origin.url("/status/500"))!
            let error = await magpieError { try await downloader.downloadData(with: url, options: ImageDownloadOptions(retryStrategy: strategy)) }
            #expect(error?.statusCode == 500)
            #expect(origin.requestCount(path: "/status/500") == 3)
        }
    }

    @Test func clientErrorsAreNeverRetried() async throws {
        try await withOrigin { origin, downloader in
            let strategy = DelayRetryStrategy(maxRetryCount: 5, retryInterval: .seconds(0.01))
            for code in [400, 403, 404] {
                let error = await magpieError {
                    try await downloader.downloadData(with: URL(string: origin.url("/status/\(code)"))!, options: ImageDownloadOptions(retryStrategy: strategy))
                }
                #expect(error?.statusCode == code)
                #expect(origin.requestCount(path: "/status/\(code)") == 1)
            }
        }
    }

    @Test func retryAfterIsHonoured() async throws {
        try await withOrigin { origin, downloader in
            let strategy = DelayRetryStrategy(maxRetryCount: 1, retryInterval: .seconds(0.01))
            let url = URL(string: origin.url("/flaky/pic.png?failures=1&code=429&retryAfter=1"))!
            let started = ContinuousClock.now
            _ = try await downloader.downloadData(with: url, options: ImageDownloadOptions(retryStrategy: strategy))
            #expect(ContinuousClock.now - started >= .milliseconds(950))
        }
    }

    @Test func retryAfterBeyondTheMaximumStopsRetrying() async {
        let strategy = DelayRetryStrategy(maxRetryCount: 3, retryInterval: .seconds(1), maximumRetryAfter: .seconds(60))
        let response = HTTPResponseInfo(url: URL(string: "http://x/")!, statusCode: 503)
        let context = { (retryAfter: Duration?) in
            RetryContext(url: response.url, error: .responseFailed(reason: .badStatus(response)), retriedCount: 0, retryAfter: retryAfter)
        }
        #expect(await strategy.retry(context: context(.seconds(3600))) == .stop)
        #expect(await strategy.retry(context: context(.seconds(5))) == .retry(after: .seconds(5)))
        #expect(await strategy.retry(context: context(nil)) == .retry(after: .seconds(1)))
    }

    @Test func retryIntervalsGrowAsConfigured() {
        #expect(DelayRetryStrategy.Interval.seconds(2).delay(forRetry: 3) == .seconds(2))
        #expect(DelayRetryStrategy.Interval.accumulated(2).delay(forRetry: 3) == .seconds(6))
        #expect(DelayRetryStrategy.Interval.custom { .seconds($0 * $0) }.delay(forRetry: 3) == .seconds(9))
    }

    @Test func cancellationStopsRetries() async throws {
        try await withOrigin { origin, downloader in
            let strategy = DelayRetryStrategy(maxRetryCount: 5, retryInterval: .seconds(30))
            let url = URL(string: origin.url("/status/503"))!
            let task = Task { try await downloader.downloadData(with: url, options: ImageDownloadOptions(retryStrategy: strategy)) }
            for _ in 0..<1000 where origin.requestCount(path: "/status/503") == 0 { try await Task.sleep(for: .milliseconds(10)) }
            let started = ContinuousClock.now
            task.cancel()
            let error = await magpieError { try await task.value }
            #expect(error?.isCancellation == true)
            #expect(ContinuousClock.now - started < .seconds(5))
            try await Task.sleep(for: .milliseconds(100))
            #expect(origin.requestCount(path: "/status/503") == 1)
        }
    }

    // MARK: Concurrency and priority

    @Test func concurrentDownloadsAreQueuedNotFailedBeyondTheLimit() async throws {
        final class InFlight: ImageDownloaderDelegate {
            let state = Mutex((now: 0, peak: 0))
            func imageDownloader(_ downloader: ImageDownloader, willSend request: ImageRequest) {
                state.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
            }
            func imageDownloader(_ downloader: ImageDownloader, didFinish url: URL, result: Result<ImageDataResult, MagpieError>, metrics: DownloadMetrics) {
                state.withLock { $0.now -= 1 }
            }
        }
        var configuration = ImageDownloader.Configuration()
        configuration.maximumConcurrentDownloads = 2
        try await withOrigin(configuration: configuration) { origin, downloader in
            let inFlight = InFlight()
            downloader.delegate = inFlight
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        // Distinct queries: six exchanges, not one deduplicated.
                        _ = try await downloader.downloadData(with: URL(string: origin.url("/slow/pic.png?chunk=2048&delay=20&n=\(index)"))!)
                    }
                }
                try await group.waitForAll()
            }
            #expect(inFlight.state.withLock { $0.peak } == 2)
        }
    }

    @Test func perHostLimitLetsOtherHostsRun() async throws {
        var configuration = ImageDownloader.Configuration()
        configuration.maximumConcurrentDownloadsPerHost = 1
        try await withOrigin(configuration: configuration) { origin, downloader in
            // The same origin under two host names: 127.0.0.1 and localhost.
            let stalled = Task {
                try await downloader.downloadData(with: URL(string: origin.url("/stall/pic.png"))!, options: ImageDownloadOptions(timeout: .seconds(10)))
            }
            for _ in 0..<1000 where origin.requestCount(path: "/stall/pic.png") == 0 { try await Task.sleep(for: .milliseconds(10)) }
            let other = try await downloader.downloadData(with: URL(string: "http://localhost:\(origin.port)/img/pic.png")!)
            #expect(other.data == OriginFixture.png)
            // A second request to the stalled host waits for its slot.
            let queued = Task { try await downloader.downloadData(with: URL(string: origin.url("/img/photo.jpg"))!) }
            for _ in 0..<1000 where downloader.queuedDownloadCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(downloader.queuedDownloadCount == 1)
            #expect(origin.requestCount(path: "/img/photo.jpg") == 0)
            stalled.cancel()
            #expect(try await queued.value.data == OriginFixture.jpeg)
        }
    }

    /// Records the query of each request as it is sent: the order downloads got their slot.
    final class SendOrder: ImageDownloaderDelegate {
        let paths = Recorder<String>()
        func imageDownloader(_ downloader: ImageDownloader, willSend request: ImageRequest) { paths.append(request.url.query ?? "") }
    }

    /// A downloader with one slot, held by a stalled download until `body` cancels the returned task; `body`
    /// queues downloads behind it. Sends are recorded in `order`.
    func withOneHeldSlot(
        _ body: (ImageOrigin, ImageDownloader, SendOrder, Task<ImageDataResult, any Error>) async throws -> Void
    ) async throws {
        var configuration = ImageDownloader.Configuration()
        configuration.maximumConcurrentDownloads = 1
        try await withOrigin(configuration: configuration) { origin, downloader in
            let order = SendOrder()
            downloader.delegate = order
            let blocker = Task { try await downloader.downloadData(with: URL(string: origin.url("/stall/pic.png?n=blocker"))!) }
            for _ in 0..<2000 where order.paths.all.isEmpty { try await Task.sleep(for: .milliseconds(5)) }  // up to 10 s on a loaded machine
            try await body(origin, downloader, order, blocker)
        }
    }

    /// Starts a download of `url` at `priority` and returns once it waits in the queue.
    func enqueue(_ url: URL, priority: Double, on downloader: ImageDownloader) async throws -> Task<ImageDataResult, any Error> {
        let queued = downloader.queuedDownloadCount
        let task = Task { try await downloader.downloadData(with: url, options: ImageDownloadOptions(priority: priority)) }
        for _ in 0..<2000 where downloader.queuedDownloadCount <= queued { try await Task.sleep(for: .milliseconds(5)) }
        return task
    }

    @Test func queuedDownloadsStartInPriorityOrder() async throws {
        try await withOneHeldSlot { origin, downloader, order, blocker in
            var queued: [Task<ImageDataResult, any Error>] = []
            for (name, priority) in [("low", 0.1), ("high", 0.9), ("mid", 0.5), ("high2", 0.9)] {
                queued.append(try await self.enqueue(URL(string: origin.url("/img/pic.png?n=\(name)"))!, priority: priority, on: downloader))
            }
            blocker.cancel()
            for task in queued { _ = try await task.value }
            #expect(order.paths.all == ["n=blocker", "n=high", "n=high2", "n=mid", "n=low"])
        }
    }

    @Test func aHighPriorityCallerJoiningAQueuedLowPriorityDownloadMovesItUpTheQueue() async throws {
        try await withOneHeldSlot { origin, downloader, order, blocker in
            let low = URL(string: origin.url("/img/pic.png?n=low"))!
            let queued = [
                try await self.enqueue(low, priority: 0.1, on: downloader),
                try await self.enqueue(URL(string: origin.url("/img/pic.png?n=mid"))!, priority: 0.5, on: downloader),
            ]
            // Joins the queued low download (same request): the shared exchange is escalated, its ticket moves up.
            let joiner = Task { try await downloader.downloadData(with: low, options: ImageDownloadOptions(priority: 0.9)) }
            for _ in 0..<2000 where downloader.scheduler.waitingPriorities.first ?? 0 < 0.8 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(downloader.scheduler.waitingPriorities == [0.875, 0.5])
            blocker.cancel()
            for task in queued + [joiner] { _ = try await task.value }
            #expect(order.paths.all == ["n=blocker", "n=low", "n=mid"])
        }
    }

    // MARK: Revalidation

    @Test func okResponsesCarryValidatorsAndMaxAge() async throws {
        try await withOrigin { origin, downloader in
            let result = try await downloader.downloadData(with: URL(string: origin.url("/img/pic.png"))!)
            let validators = try #require(result.response?.validators)
            #expect(validators.etag == OriginAsset.strongETag(for: [UInt8](OriginFixture.png)))
            #expect(validators.lastModified == OriginAsset.defaultLastModified)
            #expect(validators.maxAge == 600)
            #expect(validators.contentType == "image/png")
        }
    }

    @Test func conditionalRequestGetsNotModifiedWithNoBody() async throws {
        try await withOrigin { origin, downloader in
            let url = URL(string: origin.url("/img/pic.png"))!
            let first = try await downloader.downloadData(with: url)
            let bytesBefore = origin.bodyBytesSent
            let second = try await downloader.downloadData(with: url, options: ImageDownloadOptions(validators: first.response?.validators))
            #expect(second.notModified)
            #expect(second.data.isEmpty)
            #expect(second.response?.statusCode == 304)
            #expect(origin.bodyBytesSent == bytesBefore)
            #expect(downloader.statistics.notModified == 1)

            let byDate = DiskStorage.Validators(lastModified: OriginAsset.defaultLastModified)
            #expect(try await downloader.downloadData(with: url, options: ImageDownloadOptions(validators: byDate)).notModified)
        }
    }

    @Test func changedResourceAnswersTheConditionalRequestWithTheNewBody() async throws {
        try await withOrigin { origin, downloader in
            let url = URL(string: origin.url("/img/pic.png"))!
            let first = try await downloader.downloadData(with: url)
            origin.setAsset(OriginAsset(bytes: [UInt8](OriginFixture.jpeg), contentType: "image/jpeg", lastModified: "Thu, 22 Oct 2015 07:28:00 GMT"), forName: "pic.png")
            let second = try await downloader.downloadData(with: url, options: ImageDownloadOptions(validators: first.response?.validators))
            #expect(!second.notModified)
            #expect(second.data == OriginFixture.jpeg)
        }
    }
}

extension DownloadPolicyTests {
    @Test func unfollowedRedirectStatusesFailAsBadStatus() async throws {
        try await withOrigin { origin, downloader in
            for code in [300, 301] {  // /status/301 sends no Location
                let error = await magpieError { try await downloader.downloadData(with: URL(string: origin.url("/status/\(code)"))!) }
                #expect(error?.statusCode == code)
            }
        }
    }

    @Test func callersWithDifferentTimeoutsOrTheirOwnRedirectHandlerDoNotShareAnExchange() async throws {
        try await withOrigin { origin, downloader in
            let url = URL(string: origin.url("/slow/pic.png?chunk=512&delay=30"))!
            async let a = downloader.downloadData(with: url)
            async let b = downloader.downloadData(with: url, options: ImageDownloadOptions(timeout: .seconds(30)))
            async let c = downloader.downloadData(with: url, options: ImageDownloadOptions(redirectHandler: AnyRedirectHandler { _, request in request }))
            async let d = downloader.downloadData(with: url)
            _ = try await (a, b, c, d)
            #expect(origin.requestCount(path: "/slow/pic.png") == 3)
            #expect(downloader.statistics.dedupeHits == 1)
        }
    }
}
