import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

/// Processors in the pipeline, the original cache, processing coalescing, the failed-URL list,
/// the cache-key filter, the image modifier and cancellation.
@Suite("ImageManager processing, coalescing, failed URLs, cancellation")
struct ImageManagerProcessingTests {
    typealias Fixture = ImageManagerTests.Fixture

    @Test func processorResultIsCachedUnderTheProcessorsKey() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = fixture.manager(cache)
        let url = fixture.url("/img/photo.jpg")
        let processor = DownsamplingImageProcessor(size: PixelSize(width: 40, height: 40))
        let first = try await manager.retrieveImage(with: url, options: [.processor(processor)])
        #expect(first.image.pixelSize == PixelSize(width: 40, height: 30))
        #expect(await cache.imageCachedType(forKey: url.absoluteString, processorIdentifier: "downsample:40x40") == .memory)
        #expect(cache.diskStorage?.isCached(forKey: url.absoluteString + "@downsample:40x40") == true)
        // Without cacheOriginalImage the unprocessed bytes are not stored.
        #expect(cache.diskStorage?.isCached(forKey: url.absoluteString) == false)
        #expect(try await manager.retrieveImage(with: url, options: [.processor(processor)]).cacheType == .memory)
        let fresh = try await fixture.manager(fixture.cache()).retrieveImage(with: url, options: [.processor(processor)])
        #expect(fresh.cacheType == .disk && fresh.image.pixelSize == PixelSize(width: 40, height: 30))
        // The unprocessed image is another variant: it needs a download.
        #expect(try await manager.retrieveImage(with: url).image.pixelSize == PixelSize(width: 80, height: 60))
        #expect(fixture.origin.requestCount(path: "/img/photo.jpg") == 2)
        try await fixture.stop()
    }

    @Test func downsamplingOptionFitsTheImageInsideTheSize() async throws {
        let fixture = try await Fixture.start()
        let result = try await fixture.manager(fixture.cache()).retrieveImage(
            with: fixture.url("/img/photo.jpg"), options: [.downsampling(PixelSize(width: 20, height: 20))])
        #expect(result.image.pixelSize == PixelSize(width: 20, height: 15))
        try await fixture.stop()
    }

    @Test func cacheOriginalImageLetsAnotherProcessorSkipTheDownload() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = fixture.manager(cache)
        let url = fixture.url("/img/photo.jpg")
        let small = DownsamplingImageProcessor(size: PixelSize(width: 40, height: 40))
        _ = try await manager.retrieveImage(with: url, options: [.processor(small), .cacheOriginalImage])
        #expect(try cache.diskStorage?.value(forKey: url.absoluteString) == OriginFixture.jpeg)
        let other = CountingProcessor(name: "other")
        let fresh = fixture.manager(fixture.cache())
        let result = try await fresh.retrieveImage(with: url, options: [.processor(other)])
        #expect(result.cacheType == .disk)
        #expect(other.runs == 1 && result.image.pixels[0, 0] == CountingProcessor.mark)
        #expect(fresh.statistics.processedFromOriginal == 1 && fresh.statistics.downloads == 0)
        #expect(fixture.origin.requestCount(path: "/img/photo.jpg") == 1)
        try await fixture.stop()
    }

    @Test func originalCacheOptionNamesWhereOriginalsLive() async throws {
        let fixture = try await Fixture.start()
        let target = fixture.cache(name: "target"), originals = fixture.cache(name: "originals")
        let manager = fixture.manager(target)
        let url = fixture.url("/img/photo.jpg")
        let processor = DownsamplingImageProcessor(size: PixelSize(width: 40, height: 40))
        _ = try await manager.retrieveImage(with: url, options: [.processor(processor), .cacheOriginalImage, .originalCache(originals)])
        #expect(originals.diskStorage?.isCached(forKey: url.absoluteString) == true)
        #expect(target.diskStorage?.isCached(forKey: url.absoluteString) == false)
        // Another processor finds the original there instead of downloading.
        let other = CountingProcessor(name: "from-originals")
        _ = try await manager.retrieveImage(with: url, options: [.processor(other), .originalCache(originals)])
        #expect(fixture.origin.requestCount(path: "/img/photo.jpg") == 1)
        // Without the option the target cache is searched, which has no original: a download.
        _ = try await manager.retrieveImage(with: url, options: [.processor(CountingProcessor(name: "no-original"))])
        #expect(fixture.origin.requestCount(path: "/img/photo.jpg") == 2)
        try await fixture.stop()
    }

    @Test func cacheSerializerDecidesTheBytesOnDisk() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let url = fixture.url("/img/photo.jpg")
        _ = try await fixture.manager(cache).retrieveImage(with: url, options: [.cacheSerializer(FormatIndicatedCacheSerializer.png)])
        let stored = try #require(try cache.diskStorage?.value(forKey: url.absoluteString))
        #expect(ImageFormat(sniffing: stored) == .png)
        let plain = fixture.url("/img/photo.jpg?plain")
        _ = try await fixture.manager(cache).retrieveImage(with: plain)
        #expect(try cache.diskStorage?.value(forKey: plain.absoluteString) == OriginFixture.jpeg)
        try await fixture.stop()
    }

    @Test func imageModifierChangesOnlyTheReturnedImage() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let url = fixture.url("/img/pic.png")
        let modifier = AnyImageModifier { image in
            var image = image
            image.scale = 3
            return image
        }
        #expect(try await manager.retrieveImage(with: url, options: [.imageModifier(modifier)]).image.scale == 3)
        let cached = try await manager.retrieveImage(with: url)
        #expect(cached.cacheType == .memory && cached.image.scale == 1)
        #expect(try await manager.retrieveImage(with: url, options: [.imageModifier(modifier)]).image.scale == 3)
        try await fixture.stop()
    }

    @Test func concurrentRequestsForOneVariantDownloadAndProcessOnce() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let processor = CountingProcessor(name: "slow", delay: 0.2)
        let url = fixture.url("/slow/noise.png?chunk=65536&delay=20")
        let results = try await withThrowingTaskGroup(of: RetrieveImageResult.self) { group in
            for _ in 0..<20 { group.addTask { try await manager.retrieveImage(with: url, options: [.processor(processor)]) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 20)
        #expect(results.allSatisfy { $0.image.pixels[0, 0] == CountingProcessor.mark })
        #expect(processor.runs == 1)
        #expect(fixture.origin.requestCount(path: "/slow/noise.png") == 1)
        #expect(manager.statistics.processingRuns == 1)
        #expect(manager.statistics.coalesced == 19)
        try await fixture.stop()
    }

    @Test func differentProcessorsOverOneURLShareTheDownload() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let url = fixture.url("/slow/noise.png?chunk=65536&delay=20")
        let processors = (0..<4).map { CountingProcessor(name: "p\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for processor in processors { group.addTask { _ = try await manager.retrieveImage(with: url, options: [.processor(processor)]) } }
            try await group.waitForAll()
        }
        #expect(processors.allSatisfy { $0.runs == 1 })
        #expect(fixture.origin.requestCount(path: "/slow/noise.png") == 1)
        try await fixture.stop()
    }

    @Test func aCancelledCallerLeavesWhileOthersStillGetTheImage() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let url = fixture.url("/slow/noise.png?chunk=16384&delay=30")
        let staying = Task { try await manager.retrieveImage(with: url) }
        let leaving = Task { try await manager.retrieveImage(with: url) }
        try await waitUntil { fixture.origin.requestCount(path: "/slow/noise.png") == 1 }
        leaving.cancel()
        let error = await magpieError { try await leaving.value }
        #expect(error?.isCancellation == true)
        #expect(try await staying.value.image.width == 256)
        try await fixture.stop()
    }

    @Test func cancellingTheOnlyCallerStopsTheDownload() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let task = Task { try await manager.retrieveImage(with: fixture.url("/stall/noise.png?after=1000")) }
        try await waitUntil { fixture.origin.activeStreams == 1 }
        task.cancel()
        #expect(await magpieError { try await task.value }?.isCancellation == true)
        try await waitUntil { fixture.origin.activeStreams == 0 }
        try await fixture.stop()
    }

    @Test func aRetrievalCancelledWhileProcessingCachesNothing() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = fixture.manager(cache)
        let url = fixture.url("/img/photo.jpg")
        let processor = GatedProcessor()
        // Off the cooperative pool: the processor blocks its thread until the gate opens.
        let options: [MagpieOption] = [.processor(processor), .cacheOriginalImage, .waitForCache, .backgroundDecode]
        let task = Task { try await manager.retrieveImage(with: url, options: options) }
        try await waitUntil { processor.state.withLock { $0.entered } }
        task.cancel()
        #expect(await magpieError { try await task.value }?.isCancellation == true)
        processor.open()
        try await waitUntil { processor.state.withLock { $0.left } }
        // The store would follow the processor at once; give it time to show up if it happens.
        try await Task.sleep(for: .milliseconds(300))
        #expect(await cache.imageCachedType(forKey: url.absoluteString, processorIdentifier: processor.identifier) == .none)
        #expect(cache.diskStorage?.isCached(forKey: url.absoluteString) == false)
        // The next caller downloads again, and its result is cached.
        _ = try await manager.retrieveImage(with: url, options: options)
        #expect(await cache.imageCachedType(forKey: url.absoluteString, processorIdentifier: processor.identifier) == .memory)
        #expect(fixture.origin.requestCount(path: "/img/photo.jpg") == 2)
        try await fixture.stop()
    }

    @Test func completionHandlerIsCalledOnceAndCancelAnswersIt() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let calls = Recorder<Bool>()
        let done = manager.retrieveImage(with: .network(fixture.url("/img/pic.png"))) { calls.append((try? $0.get()) != nil) }
        await done.wait()
        let cancelled = Recorder<Bool>()
        let task = manager.retrieveImage(with: .network(fixture.url("/stall/noise.png?after=1000"))) { result in
            cancelled.append(result.isCancellationFailure)
        }
        try await waitUntil { fixture.origin.activeStreams == 1 }
        task.cancel()
        await task.wait()
        #expect(calls.all == [true])
        #expect(cancelled.all == [true])
        try await fixture.stop()
    }

    @Test func permanentFailuresFailFastUntilRetryFailed() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let missing = fixture.url("/status/404")
        #expect(await magpieError { try await manager.retrieveImage(with: missing) }?.statusCode == 404)
        let fast = await magpieError { try await manager.retrieveImage(with: missing) }
        #expect(fast.map { if case .requestFailed(.recentlyFailed(missing, let previous)) = $0 { previous.statusCode == 404 } else { false } } == true)
        #expect(fixture.origin.requestCount(path: "/status/404") == 1)
        #expect(manager.statistics.failedFast == 1)
        #expect(await magpieError { try await manager.retrieveImage(with: missing, options: [.retryFailed]) }?.statusCode == 404)
        #expect(fixture.origin.requestCount(path: "/status/404") == 2)
        manager.failedURLs.removeAll()
        _ = await magpieError { try await manager.retrieveImage(with: missing) }
        #expect(fixture.origin.requestCount(path: "/status/404") == 3)
        // Undecodable bytes are permanent too.
        let corrupt = fixture.url("/img/corrupt.png")
        _ = await magpieError { try await manager.retrieveImage(with: corrupt) }
        #expect(manager.failedURLs.contains(corrupt))
        try await fixture.stop()
    }

    @Test func transientFailuresAreNotRemembered() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let busy = fixture.url("/status/503")
        for _ in 0..<2 { #expect(await magpieError { try await manager.retrieveImage(with: busy) }?.statusCode == 503) }
        #expect(fixture.origin.requestCount(path: "/status/503") == 2)
        #expect(!manager.failedURLs.contains(busy))
        let slow = fixture.url("/stall/pic.png?after=10")
        _ = await magpieError { try await manager.retrieveImage(with: slow, options: [.downloadTimeout(.milliseconds(200))]) }
        #expect(!manager.failedURLs.contains(slow))
        try await fixture.stop()
    }

    @Test func failedURLListIsBoundedAndForgetsTheOldest() {
        let list = FailedURLList(capacity: 3)
        let error = MagpieError.requestFailed(reason: .invalidURL("x"))
        let urls = (0..<5).map { URL(string: "https://example.com/\($0)")! }
        for url in urls { list.record(url, error: error) }
        #expect(list.count == 3)
        #expect(!list.contains(urls[0]) && !list.contains(urls[1]) && list.contains(urls[4]))
        list.record(urls[0], error: .requestFailed(reason: .timedOut(urls[0], timeout: .seconds(1))))
        #expect(!list.contains(urls[0]))
    }

    @Test func cacheKeyFilterMakesSignedURLsShareOneEntry() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = fixture.manager(cache)
        manager.cacheKeyFilter = { url in
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
            components.query = nil
            return components.string!
        }
        let first = fixture.url("/img/pic.png?signature=aaa"), second = fixture.url("/img/pic.png?signature=bbb")
        _ = try await manager.retrieveImage(with: first)
        #expect(try await manager.retrieveImage(with: second).cacheType == .memory)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 1)
        #expect(cache.diskStorage?.isCached(forKey: fixture.url("/img/pic.png").absoluteString) == true)
        // A resource with its own key keeps it.
        let own = ImageResource(downloadURL: fixture.url("/img/pic.png?signature=ccc"), cacheKey: "mine")
        #expect(try await manager.retrieveImage(with: own).cacheType == .none)
        #expect(manager.cacheKey(for: .network(own)) == "mine")
        try await fixture.stop()
    }

    @Test func aDamagedCachedEntryIsReplacedByADownload() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let url = fixture.url("/img/pic.png")
        try cache.diskStorage?.store(Data("not an image".utf8), forKey: url.absoluteString)
        let result = try await fixture.manager(cache).retrieveImage(with: url)
        #expect(result.cacheType == .none && result.image.width == 64)
        #expect(try cache.diskStorage?.value(forKey: url.absoluteString) == OriginFixture.png)
        try await fixture.stop()
    }
}

extension Result where Failure == MagpieError {
    var isCancellationFailure: Bool {
        if case .failure(let error) = self { return error.isCancellation }
        return false
    }
}

/// Marks the top-left pixel, counts its runs, optionally sleeps to widen race windows.
final class CountingProcessor: ImageProcessor {
    static let mark = RGBAColor(red: 1, green: 2, blue: 3, alpha: 255)
    let identifier: String
    let delay: TimeInterval
    private let count = Mutex(0)

    init(name: String, delay: TimeInterval = 0) {
        self.identifier = "test.count:" + name
        self.delay = delay
    }

    var runs: Int { count.withLock { $0 } }

    func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        count.withLock { $0 += 1 }
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        guard var image = try DefaultImageProcessor.default.process(item: item, context: context) else { return nil }
        image = image.mapFrames { pixels in
            var pixels = pixels
            pixels[0, 0] = Self.mark
            return pixels
        }
        return image
    }
}

extension ImageManagerProcessingTests {
    @Test func aRequestWithItsOwnModifierDoesNotJoinAnotherCallersMiss() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let url = fixture.url("/slow/noise.png?chunk=65536&delay=30")
        let token = AnyModifier { request in
            var request = request
            request.setValue("secret", forHeader: "Authorization")
            return request
        }
        async let plain = manager.retrieveImage(with: url)
        async let authorized = manager.retrieveImage(with: url, options: [.requestModifier(token)])
        _ = try await (plain, authorized)
        #expect(fixture.origin.requestCount(path: "/slow/noise.png") == 2)
        #expect(manager.statistics.coalesced == 0)
        try await fixture.stop()
    }

    @Test func requestDependentFailuresAreNotRemembered() {
        let url = URL(string: "https://example.com/a.png")!
        let response = HTTPResponseInfo(url: url, statusCode: 403, headers: [])
        #expect(!FailedURLList.isPermanent(.responseFailed(reason: .badStatus(response))))
        #expect(!FailedURLList.isPermanent(.responseFailed(reason: .tooLarge(response, limit: 10, declared: nil))))
        #expect(!FailedURLList.isPermanent(.decodingFailed(reason: .tooLarge(.png, message: "limit"))))
        #expect(!FailedURLList.isPermanent(.requestFailed(reason: .redirectRefused(url, location: url))))
        #expect(FailedURLList.isPermanent(.responseFailed(reason: .badStatus(HTTPResponseInfo(url: url, statusCode: 404, headers: [])))))
    }

    @Test func aTransientRevalidationFailureServesTheCachedCopy() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let url = fixture.url("/status/503")
        try cache.diskStorage?.store(OriginFixture.png, forKey: url.absoluteString, validators: .init(etag: "\"v1\"", maxAge: 10))
        let result = try await fixture.manager(cache).retrieveImage(with: url, options: [.revalidate])
        #expect(result.cacheType == .disk && !result.revalidated && result.image.width == 64)
        #expect(fixture.origin.requestCount(path: "/status/503") == 1)
        try await fixture.stop()
    }
}

/// Decodes only after ``open()``; records when it entered and left, so a test can act in between.
final class GatedProcessor: ImageProcessor {
    struct State {
        var entered = false
        var left = false
    }

    let identifier = "test.gated"
    let state = Mutex(State())
    private let gate = DispatchSemaphore(value: 0)

    func open() { gate.signal() }

    func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        state.withLock { $0.entered = true }
        if !state.withLock({ $0.left }) { gate.wait() }
        defer { state.withLock { $0.left = true } }
        return try DefaultImageProcessor.default.process(item: item, context: context)
    }
}
