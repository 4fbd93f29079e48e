import Dispatch
import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

/// One test per `MagpieOption` (the cache-related ones that need no processor), each failing
/// without its option. Processors, the original cache and coalescing are in ImageManagerProcessingTests.
@Suite("ImageManager options")
struct ImageManagerOptionTests {
    typealias Fixture = ImageManagerTests.Fixture

    /// A cache whose memory layer runs on the fixture's clock too.
    static func clockedCache(_ fixture: Fixture, name: String = "manager") -> ImageCache {
        ImageCache(
            name: name, memoryConfig: MemoryStorage.Config(clock: fixture.clock.clock),
            diskConfig: DiskStorage.Config(name: name, directory: fixture.folder.url, expiration: .seconds(1000), clock: fixture.clock.clock))
    }

    /// A 3-frame GIF, 16×16.
    static let animatedGIF: Data = {
        let colors: [RGBAColor] = [.white, .black, RGBAColor(red: 255, green: 0, blue: 0)]
        let frames = colors.map { ImageFrame(pixels: try! PixelBuffer(width: 16, height: 16, fill: $0), duration: .milliseconds(100)) }
        return try! ImageCoderRegistry.shared.encode(try! Image(frames: frames, loopCount: 0), as: .gif)
    }()

    @Test func targetCacheReceivesTheImageInsteadOfTheManagersCache() async throws {
        let fixture = try await Fixture.start()
        let own = fixture.cache(name: "own"), other = fixture.cache(name: "other")
        let manager = fixture.manager(own)
        let url = fixture.url("/img/pic.png")
        _ = try await manager.retrieveImage(with: url, options: [.targetCache(other)])
        #expect(await other.isCached(forKey: url.absoluteString))
        #expect(!(await own.isCached(forKey: url.absoluteString)))
        try await fixture.stop()
    }

    @Test func downloaderOptionSendsTheRequestThroughThatDownloader() async throws {
        let fixture = try await Fixture.start()
        let other = ImageDownloader(name: "other")
        _ = try await fixture.manager(fixture.cache()).retrieveImage(with: fixture.url("/img/pic.png"), options: [.downloader(other)])
        #expect(other.statistics.requestsSent == 1)
        #expect(fixture.downloader.statistics.requestsSent == 0)
        try await other.shutdown()
        try await fixture.stop()
    }

    @Test func downloadPriorityOrdersQueuedDownloads() async throws {
        let fixture = try await Fixture.start()
        var configuration = ImageDownloader.Configuration()
        configuration.maximumConcurrentDownloads = 1
        configuration.maximumConcurrentDownloadsPerHost = 1
        let downloader = ImageDownloader(name: "one-at-a-time", configuration: configuration)
        let manager = ImageManager(downloader: downloader, cache: fixture.cache())
        // A slow download holds the only slot while two more queue up, low priority first.
        let blocker = Task { try await manager.retrieveImage(with: fixture.url("/slow/noise.png?chunk=16384&delay=40")) }
        let finished = Recorder<String>()
        func start(_ name: String, priority: Double) -> Task<Void, any Error> {
            Task {
                _ = try await manager.retrieveImage(with: fixture.url("/img/\(name)"), options: [.downloadPriority(priority)])
                finished.append(name)
            }
        }
        try await waitUntil { fixture.origin.requestCount(path: "/slow/noise.png") == 1 }
        let low = start("pic.png", priority: 0.1)
        try await waitUntil { downloader.queuedDownloadCount == 1 }
        let high = start("photo.jpg", priority: 0.9)
        try await waitUntil { downloader.queuedDownloadCount == 2 }
        _ = try await blocker.value
        try await low.value
        try await high.value
        #expect(finished.all == ["photo.jpg", "pic.png"])
        try await downloader.shutdown()
        try await fixture.stop()
    }

    @Test func downloadTimeoutOverridesTheDownloadersTimeout() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let error = await magpieError {
            try await manager.retrieveImage(with: fixture.url("/stall/pic.png?after=10"), options: [.downloadTimeout(.milliseconds(300))])
        }
        #expect(error.map { if case .requestFailed(.timedOut(_, let timeout)) = $0 { timeout == .milliseconds(300) } else { false } } == true)
        try await fixture.stop()
    }

    @Test func fromMemoryCacheOrRefreshSkipsTheDisk() async throws {
        let fixture = try await Fixture.start()
        let url = fixture.url("/img/pic.png")
        _ = try await fixture.manager(fixture.cache()).retrieveImage(with: url)
        // A new cache over the same folder: the disk has the image, the memory does not.
        let plain = try await fixture.manager(fixture.cache()).retrieveImage(with: url)
        #expect(plain.cacheType == .disk)
        let refreshed = try await fixture.manager(fixture.cache()).retrieveImage(with: url, options: [.fromMemoryCacheOrRefresh])
        #expect(refreshed.cacheType == .none)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 2)
        try await fixture.stop()
    }

    @Test func waitForCacheReturnsOnlyAfterTheDiskWrite() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = ImageManager(downloader: fixture.downloader, cache: cache)
        let slow = SlowSerializer()
        let waited = fixture.url("/img/pic.png"), background = fixture.url("/img/photo.jpg")
        _ = try await manager.retrieveImage(with: waited, options: [.cacheSerializer(slow), .waitForCache])
        #expect(cache.diskStorage?.isCached(forKey: waited.absoluteString) == true)
        _ = try await manager.retrieveImage(with: background, options: [.cacheSerializer(slow)])
        // The serializer takes 300 ms: the call came back before the write.
        #expect(cache.diskStorage?.isCached(forKey: background.absoluteString) == false)
        try await waitUntil { cache.diskStorage?.isCached(forKey: background.absoluteString) == true }
        try await fixture.stop()
    }

    @Test func decodingAndProcessingRunOnTheManagersExecutorWithOrWithoutBackgroundDecode() async throws {
        let fixture = try await Fixture.start()
        let executor = BoundedExecutor(name: "test.processing", width: 1)
        let manager = ImageManager(downloader: fixture.downloader, cache: fixture.cache(), processingExecutor: executor)
        let probe = QueueProbe(executor: executor)
        _ = try await manager.retrieveImage(with: fixture.url("/img/pic.png"), options: [.processor(probe), .backgroundDecode])
        _ = try await manager.retrieveImage(with: fixture.url("/img/photo.jpg"), options: [.processor(probe)])
        #expect(probe.onProcessingQueue.all == [true, true])
        #expect(executor.peakRunningCount == 1)
        try await fixture.stop()
    }

    @Test func backgroundDecodeChangesNeitherTheVariantNorTheImageAndDiskHitsDecodeOnTheCodingExecutor() async throws {
        // The option is parsed and read by nothing: the pipeline never decodes on the caller with or without it.
        #expect(MagpieParsedOptions([.backgroundDecode]).readsPlainMemoryEntry)
        let fixture = try await Fixture.start()
        let url = fixture.url("/img/pic.png")
        let manager = fixture.manager(fixture.cache())
        let downloaded = try await manager.retrieveImage(with: url)
        let fromMemory = try await manager.retrieveImage(with: url, options: [.backgroundDecode])
        #expect(fromMemory.cacheType == .memory)
        #expect(fromMemory.image == downloaded.image)
        // A fresh cache over the same folder: a disk hit, decoded on the cache's executor, not in the calling task.
        let coding = BoundedExecutor(name: "test.coding", width: 1)
        let disk = try DiskStorage(config: DiskStorage.Config(
            name: "manager", directory: fixture.folder.url, expiration: .seconds(1000), clock: fixture.clock.clock))
        let cache = ImageCache(name: "manager", memoryCache: MemoryStorage(), dataCache: disk, codingExecutor: coding)
        let fromDisk = try await fixture.manager(cache).retrieveImage(with: url, options: [.backgroundDecode])
        #expect(fromDisk.cacheType == .disk)
        #expect(fromDisk.image == downloaded.image)
        #expect(coding.peakRunningCount == 1)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 1)
        try await fixture.stop()
    }

    @Test func concurrentMissesNeverProcessMoreAtOnceThanTheExecutorHasSlots() async throws {
        let fixture = try await Fixture.start()
        let executor = BoundedExecutor(name: "test.processing", width: 2)
        let manager = ImageManager(downloader: fixture.downloader, cache: fixture.cache(), processingExecutor: executor)
        let probe = ConcurrencyProbe(expectedRuns: 12)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<12 {
                // Distinct cache keys over one URL: twelve misses, twelve processing runs.
                let resource = ImageResource(downloadURL: fixture.url("/img/pic.png"), cacheKey: "bounded-\(i)")
                group.addTask { _ = try await manager.retrieveImage(with: resource, options: [.processor(probe), .cacheMemoryOnly]) }
            }
            try await group.waitForAll()
        }
        #expect(probe.runs == 12)
        #expect(probe.peak <= 2)
        #expect(executor.peakRunningCount == 2)
        try await fixture.stop()
    }

    @Test func callbackQueueRunsTheCompletionHandlerThere() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let queue = DispatchQueue(label: "test.callback")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "callback")
        let seen = Recorder<String?>()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            manager.retrieveImage(with: .network(fixture.url("/img/pic.png")), options: [.callbackQueue(.dispatch(queue))]) { _ in
                seen.append(DispatchQueue.getSpecific(key: key))
                done.resume()
            }
        }
        #expect(seen.all == ["callback"])
        try await fixture.stop()
    }

    @Test func scaleFactorSetsTheImageScale() async throws {
        let fixture = try await Fixture.start()
        let result = try await fixture.manager(fixture.cache()).retrieveImage(with: fixture.url("/img/pic.png"), options: [.scaleFactor(2)])
        #expect(result.image.scale == 2)
        #expect(result.image.size.width == 32)
        try await fixture.stop()
    }

    @Test func onlyLoadFirstFrameAndPreloadAllAnimationDataChooseTheFrames() async throws {
        let fixture = try await Fixture.start()
        fixture.origin.setAsset(OriginAsset(bytes: [UInt8](Self.animatedGIF), contentType: "image/gif"), forName: "anim.gif")
        let manager = fixture.manager(fixture.cache())
        let url = fixture.url("/img/anim.gif")
        #expect(try await manager.retrieveImage(with: url).image.frames.count == 3)
        #expect(try await manager.retrieveImage(with: url, options: [.onlyLoadFirstFrame]).image.frames.count == 1)
        // A manager-wide first-frame default, overridden per call.
        manager.defaultOptions = [.onlyLoadFirstFrame]
        #expect(try await manager.retrieveImage(with: url).image.frames.count == 1)
        #expect(try await manager.retrieveImage(with: url, options: [.preloadAllAnimationData]).image.frames.count == 3)
        try await fixture.stop()
    }

    @Test func requestModifierChangesTheRequest() async throws {
        let fixture = try await Fixture.start()
        let modifier = AnyModifier { request in
            var request = request
            request.setValue("modified", forHeader: "X-Magpie-Test")
            return request
        }
        _ = try await fixture.manager(fixture.cache()).retrieveImage(with: fixture.url("/img/pic.png"), options: [.requestModifier(modifier)])
        #expect(fixture.origin.lastRequestHeaders(path: "/img/pic.png")["x-magpie-test"] == "modified")
        try await fixture.stop()
    }

    @Test func redirectHandlerCanRefuseARedirect() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let url = fixture.url("/redirect/1/pic.png")
        #expect(try await manager.retrieveImage(with: url).image.width == 64)
        let refuse = AnyRedirectHandler { _, _ in nil }
        let error = await magpieError { try await manager.retrieveImage(with: url, options: [.forceRefresh, .redirectHandler(refuse)]) }
        #expect(error.map { if case .requestFailed(.redirectRefused) = $0 { true } else { false } } == true)
        try await fixture.stop()
    }

    @Test func retryStrategyRetriesATransientFailure() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let plain = await magpieError { try await manager.retrieveImage(with: fixture.url("/flaky/pic.png?failures=1&run=a")) }
        #expect(plain?.statusCode == 503)
        let retried = try await manager.retrieveImage(
            with: fixture.url("/flaky/pic.png?failures=1&run=b"),
            options: [.retryStrategy(DelayRetryStrategy(maxRetryCount: 2, retryInterval: .seconds(0.01)))])
        #expect(retried.image.width == 64)
        try await fixture.stop()
    }

    @Test func alternativeSourcesAreTriedWhenTheSourceFails() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let missing = fixture.url("/status/404"), fallback = fixture.url("/img/photo.jpg")
        let result = try await manager.retrieveImage(with: missing, options: [.alternativeSources([.network(fallback)])])
        #expect(result.source.url == fallback)
        #expect(result.originalSource.url == missing)
        #expect(result.image.width == 80)
        let error = await magpieError { try await manager.retrieveImage(with: fixture.url("/status/410")) }
        #expect(error?.statusCode == 410)
        try await fixture.stop()
    }

    @Test func memoryCacheExpirationSetsTheMemoryEntrysLifetime() async throws {
        let fixture = try await Fixture.start()
        let cache = Self.clockedCache(fixture)
        let manager = fixture.manager(cache)
        let short = fixture.url("/img/pic.png"), normal = fixture.url("/img/photo.jpg")
        _ = try await manager.retrieveImage(with: short, options: [.memoryCacheExpiration(.seconds(10))])
        _ = try await manager.retrieveImage(with: normal)
        fixture.clock.advance(20)
        #expect(try await manager.retrieveImage(with: short).cacheType == .disk)
        #expect(try await manager.retrieveImage(with: normal).cacheType == .memory)
        try await fixture.stop()
    }

    @Test func memoryCacheAccessExtendingExpirationControlsWhatAHitDoes() async throws {
        let fixture = try await Fixture.start()
        let cache = Self.clockedCache(fixture)
        let manager = fixture.manager(cache)
        let kept = fixture.url("/img/pic.png"), extended = fixture.url("/img/photo.jpg")
        for url in [kept, extended] { _ = try await manager.retrieveImage(with: url, options: [.memoryCacheExpiration(.seconds(10))]) }
        fixture.clock.advance(8)
        _ = try await manager.retrieveImage(with: kept, options: [.memoryCacheAccessExtendingExpiration(.none)])
        _ = try await manager.retrieveImage(with: extended)
        fixture.clock.advance(8)
        #expect(try await manager.retrieveImage(with: kept).cacheType == .disk)
        #expect(try await manager.retrieveImage(with: extended).cacheType == .memory)
        try await fixture.stop()
    }

    @Test func diskCacheExpirationSetsTheDiskEntrysLifetime() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let url = fixture.url("/img/pic.png")
        _ = try await fixture.manager(cache).retrieveImage(with: url, options: [.diskCacheExpiration(.seconds(5))])
        let entry = try #require(try cache.diskStorage?.metadata(forKey: url.absoluteString))
        #expect(entry.expiration.timeIntervalSince(entry.created) == 5)
        try await fixture.stop()
    }

    @Test func diskCacheAccessExtendingExpirationControlsWhatADiskHitDoes() async throws {
        let fixture = try await Fixture.start()
        let url = fixture.url("/img/pic.png")
        let cache = fixture.cache()
        _ = try await fixture.manager(cache).retrieveImage(with: url)
        let stored = try #require(try cache.diskStorage?.metadata(forKey: url.absoluteString))
        fixture.clock.advance(100)
        let reader = fixture.cache()
        #expect(try await fixture.manager(reader).retrieveImage(with: url, options: [.diskCacheAccessExtendingExpiration(.none)]).cacheType == .disk)
        try reader.diskStorage?.flushAccessTimes()
        #expect(try cache.diskStorage?.metadata(forKey: url.absoluteString)?.expiration == stored.expiration)
        let extender = fixture.cache()
        #expect(try await fixture.manager(extender).retrieveImage(with: url).cacheType == .disk)
        try extender.diskStorage?.flushAccessTimes()
        #expect(try cache.diskStorage?.metadata(forKey: url.absoluteString)?.expiration == stored.expiration.addingTimeInterval(100))
        try await fixture.stop()
    }

    @Test func respectCacheControlServesFreshEntriesAndRevalidatesStaleOnes() async throws {
        let fixture = try await Fixture.start()
        let url = fixture.url("/img/pic.png")  // served with max-age=600
        _ = try await fixture.manager(fixture.cache()).retrieveImage(with: url)
        fixture.clock.advance(300)
        let fresh = try await fixture.manager(fixture.cache()).retrieveImage(with: url, options: [.respectCacheControl])
        #expect(fresh.cacheType == .disk && !fresh.revalidated)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 1)
        fixture.clock.advance(400)
        // Stale now: without the option the disk entry is served as is…
        #expect(try await fixture.manager(fixture.cache()).retrieveImage(with: url).revalidated == false)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 1)
        // …with it, a conditional request is made. (What a 304 does to freshness is HTTPCachingTests' subject: here the
        // test clock ran 700 s ahead of the origin's `Date`, so by RFC 9111's apparent age the 304 is already stale.)
        let stale = try await fixture.manager(fixture.cache()).retrieveImage(with: url, options: [.respectCacheControl])
        #expect(stale.revalidated && stale.cacheType == .disk && stale.served == .revalidated)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 2)
        try await fixture.stop()
    }

    @Test func decodingOptionsDownsampleTheDecode() async throws {
        let fixture = try await Fixture.start()
        let options = ImageDecodingOptions(targetSize: PixelSize(width: 20, height: 15))
        let result = try await fixture.manager(fixture.cache()).retrieveImage(with: fixture.url("/img/photo.jpg"), options: [.decodingOptions(options)])
        #expect(result.image.width < 80 && result.image.width >= 20)
        try await fixture.stop()
    }
}

/// Polls `condition` every 10 ms for up to 10 s.
func waitUntil(_ condition: @Sendable () -> Bool) async throws {
    for _ in 0..<1000 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("condition not met within 10 s")
}

/// Stores images as PNG after a 300 ms pause, so a test can tell whether a caller waited for it.
struct SlowSerializer: CacheSerializer {
    func data(with image: Image, original: Data?) throws -> Data {
        Thread.sleep(forTimeInterval: 0.3)
        return try ImageCoderRegistry.shared.encode(image, as: .png)
    }

    func image(with data: Data, options: ImageDecodingOptions) throws -> Image {
        try ImageCoderRegistry.shared.decode(data, options: options)
    }
}

/// A processor that records whether it ran as a job of `executor`.
final class QueueProbe: ImageProcessor {
    let onProcessingQueue = Recorder<Bool>()
    let executor: BoundedExecutor
    var identifier: String { "test.queue-probe" }

    init(executor: BoundedExecutor) { self.executor = executor }

    func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        onProcessingQueue.append(executor.runningCount == 1)
        return try DefaultImageProcessor.default.process(item: item, context: context)
    }
}

/// A processor that counts how many of its runs overlap. Each run holds on until another run is going
/// beside it (or every expected run has started, or 10 s passed), so overlap happens whenever the
/// executor allows it, whatever the timing of the downloads.
final class ConcurrencyProbe: ImageProcessor {
    private let state = Mutex<(running: Int, peak: Int, runs: Int)>((0, 0, 0))
    let expectedRuns: Int
    var identifier: String { "test.concurrency-probe" }
    var peak: Int { state.withLock { $0.peak } }
    var runs: Int { state.withLock { $0.runs } }

    init(expectedRuns: Int) { self.expectedRuns = expectedRuns }

    func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        state.withLock { state in
            state.running += 1
            state.runs += 1
            state.peak = max(state.peak, state.running)
        }
        defer { state.withLock { $0.running -= 1 } }
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, state.withLock({ $0.running < 2 && $0.runs < expectedRuns }) {
            Thread.sleep(forTimeInterval: 0.002)
        }
        return try DefaultImageProcessor.default.process(item: item, context: context)
    }
}
