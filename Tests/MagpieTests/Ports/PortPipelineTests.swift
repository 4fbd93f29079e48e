import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// Each port driven through the whole pipeline by a test implementation (``InMemoryDataCache``,
/// ``DictionaryMemoryCache``, ``ScriptedLoader``): nothing outside the tests knows these types.
@Suite("Ports: the pipeline over test backends")
struct PortPipelineTests {
    static let url = URL(string: "https://images.test/cat.png")!
    static let png: Data = {
        let pixels = try! TestImages.gradient(width: 40, height: 30)
        return try! ImageCoderRegistry.shared.encode(Image(pixels: pixels), as: .png)
    }()

    func cache(memory: any MemoryCaching = MemoryStorage(config: .init(cleanInterval: 0)), data: InMemoryDataCache) -> ImageCache {
        ImageCache(name: "ports", memoryCache: memory, dataCache: data)
    }

    @Test func aScriptedLoaderAndAnInMemoryDataCacheRunTheWholePipeline() async throws {
        let loader = ScriptedLoader([Self.url: .init(data: Self.png, etag: "\"v1\"")])
        let data = InMemoryDataCache()
        let manager = ImageManager(loader: loader, cache: cache(data: data))
        let first = try await manager.retrieveImage(with: Self.url, options: [.waitForCache])
        #expect(first.cacheType == .none)
        #expect(first.image.pixelSize == PixelSize(width: 40, height: 30))
        // The original's bytes and the response's validators went to the data cache port.
        let stored = try #require(data.entry(Self.url.absoluteString))
        #expect(stored.data == Self.png)
        #expect(stored.metadata.validators.etag == "\"v1\"")
        let memoryHit = try await manager.retrieveImage(with: Self.url)
        #expect(memoryHit.cacheType == .memory)
        #expect(await memoryHit.data() == Self.png, "a hit hands back the cached bytes, as Kingfisher's result.data()")
        // A manager with an empty memory layer over the same data cache: a disk hit, no load.
        let second = ImageManager(loader: loader, cache: cache(data: data))
        #expect(await second.cachedType(for: .network(Self.url)) == .disk, "the data cache port is asked, and awaited")
        let hit = try await second.retrieveImage(with: Self.url)
        #expect(hit.cacheType == .disk)
        #expect(await hit.data() == Self.png)
        #expect(loader.calls.count == 1)
    }

    @Test func aProcessedVariantIsStoredUnderItsOwnKeyThroughThePort() async throws {
        let loader = ScriptedLoader([Self.url: .init(data: Self.png)])
        let data = InMemoryDataCache()
        let manager = ImageManager(loader: loader, cache: cache(data: data))
        let resize = ResizingImageProcessor(referenceSize: PixelSize(width: 20, height: 20), mode: .aspectFit)
        let result = try await manager.retrieveImage(with: Self.url, options: [.processor(resize), .waitForCache, .cacheOriginalImage])
        #expect(result.image.pixelSize == PixelSize(width: 20, height: 15))
        let key = CacheKey.stored(Self.url.absoluteString, variant: resize.identifier)
        #expect(data.keys == [Self.url.absoluteString, key].sorted())
        // Another processor is made from the original in the data cache: no second load.
        let fresh = ImageManager(loader: loader, cache: cache(data: data))
        let blurred = try await fresh.retrieveImage(with: Self.url, options: [.processor(BlurImageProcessor(blurRadius: 1)), .waitForCache])
        #expect(blurred.cacheType == .disk)
        #expect(fresh.statistics.processedFromOriginal == 1)
        #expect(loader.calls.count == 1)
    }

    @Test func revalidationSendsTheStoredValidatorsAndA304RefreshesTheEntryThroughThePort() async throws {
        let loader = ScriptedLoader([Self.url: .init(data: Self.png, etag: "\"v1\"")])
        let data = InMemoryDataCache()
        let manager = ImageManager(loader: loader, cache: cache(data: data))
        _ = try await manager.retrieveImage(with: Self.url, options: [.waitForCache])
        let revalidated = try await manager.retrieveImage(with: Self.url, options: [.revalidate])
        #expect(revalidated.revalidated)
        #expect(revalidated.cacheType == .memory)
        #expect(loader.calls.count == 2)
        #expect(loader.calls[1].validators?.etag == "\"v1\"")
        #expect(data.refreshedKeys == [Self.url.absoluteString])
        // A changed upstream: the 200 replaces the entry.
        let changed = try ImageCoderRegistry.shared.encode(Image(pixels: TestImages.gradient(width: 8, height: 8)), as: .png)
        loader.set(Self.url, .init(data: changed, etag: "\"v2\""))
        let replaced = try await manager.retrieveImage(with: Self.url, options: [.revalidate, .waitForCache])
        #expect(replaced.image.pixelSize == PixelSize(width: 8, height: 8))
        #expect(data.entry(Self.url.absoluteString)?.metadata.validators.etag == "\"v2\"")
    }

    @Test func maxAgeFromTheDataCachePortDecidesWhenToRevalidate() async throws {
        let clock = TestClock()
        let loader = ScriptedLoader([Self.url: .init(data: Self.png, etag: "\"v1\"", maxAge: 60)])
        let data = InMemoryDataCache(clock: clock.clock)
        let manager = ImageManager(loader: loader, cache: cache(data: data))
        _ = try await manager.retrieveImage(with: Self.url, options: [.waitForCache])
        _ = try await manager.retrieveImage(with: Self.url, options: [.respectCacheControl])
        #expect(loader.calls.count == 1)
        clock.advance(61)
        let stale = try await manager.retrieveImage(with: Self.url, options: [.respectCacheControl])
        #expect(stale.revalidated)
        #expect(loader.calls.count == 2)
    }

    @Test func aCustomMemoryCacheHoldsWhatThePipelineStores() async throws {
        let loader = ScriptedLoader([Self.url: .init(data: Self.png)])
        let memory = DictionaryMemoryCache()
        let manager = ImageManager(loader: loader, cache: cache(memory: memory, data: InMemoryDataCache()))
        _ = try await manager.retrieveImage(with: Self.url, options: [.waitForCache])
        #expect(memory.keys == [Self.url.absoluteString])
        #expect(try await manager.retrieveImage(with: Self.url).cacheType == .memory)
        #expect(memory.hits >= 1)
        #expect(manager.cache.memoryStorage == nil)
        #expect(await manager.cachedType(for: .network(Self.url)) == .memory)
    }

    @Test func aMemoryCacheWithLimitsOfItsOwnConformsWithoutMemoryStoragesTypes() async throws {
        let memory = DictionaryMemoryCache()
        memory.countLimit = 1
        let cache = cache(memory: memory, data: InMemoryDataCache())
        let image = Image(pixels: try TestImages.gradient(width: 4, height: 4))
        await cache.store(image, forKey: "a", toDisk: false)
        await cache.store(image, forKey: "b", toDisk: false)
        #expect(memory.keys == ["b"], "its own count limit, which the pipeline never reads")
        #expect(cache.memoryStorage == nil && cache.memoryCache === memory)
    }

    @Test func theLoaderReceivesTheRetrievalsNetworkOptionsAsItsOwnRequest() async throws {
        let loader = ScriptedLoader([Self.url: .init(data: Self.png)])
        let manager = ImageManager(loader: loader, cache: cache(data: InMemoryDataCache()))
        let reports = Recorder<Int64>()
        _ = try await manager.retrieveImage(
            with: Self.url, options: [.downloadPriority(0.9), .downloadTimeout(.seconds(7))],
            progressBlock: { received, _ in reports.append(received) })
        let call = try #require(loader.calls.first)
        #expect(call.priority == 0.9 && call.timeout == .seconds(7) && call.validators == nil)
        #expect(call.spoolDirectory == nil, "a data cache without files offers no spool folder")
        #expect(reports.all.last == Int64(Self.png.count), "the request's progress reaches the caller")
    }

    @Test func theLoaderIsOfferedTheDiskStoragesSpoolFolderOnTheEntriesVolume() async throws {
        let folder = try TemporaryFolder()
        defer { folder.cleanUp() }
        let loader = ScriptedLoader([Self.url: .init(data: Self.png)])
        let disk = try DiskStorage(config: DiskStorage.Config(name: "spool-offer", directory: folder.url))
        let manager = ImageManager(
            loader: loader, cache: ImageCache(name: "ports-disk", memoryCache: MemoryStorage(config: .init(cleanInterval: 0)), dataCache: disk))
        _ = try await manager.retrieveImage(with: Self.url, options: [.waitForCache])
        #expect(loader.calls.first?.spoolDirectory == disk.spoolDirectory)
        await manager.shutdown()
    }

    @Test func concurrentCallersOfOneVariantMakeOneLoadThroughTheLoaderPort() async throws {
        let gate = SharedWorkTests.Gate()
        let loader = ScriptedLoader([Self.url: .init(data: Self.png)], gate: gate)
        let manager = ImageManager(loader: loader, cache: cache(data: InMemoryDataCache()))
        let tasks = (0..<50).map { _ in Task { try await manager.retrieveImage(with: Self.url) } }
        // Every caller is waiting on the one load the gate holds.
        try await waitUntil { loader.calls.count == 1 && manager.statistics.coalesced == 49 }
        gate.open()
        for task in tasks { #expect(try await task.value.image.pixelSize == PixelSize(width: 40, height: 30)) }
        #expect(loader.calls.count == 1)
        #expect(manager.statistics.coalesced == 49)
    }

    @Test func missesBeyondTheLimitWaitForASlotBeforeTheyLoad() async throws {
        let gate = SharedWorkTests.Gate()
        let loader = ScriptedLoader([Self.url: .init(data: Self.png)], gate: gate)
        let manager = ImageManager(loader: loader, cache: cache(data: InMemoryDataCache()), maximumConcurrentMisses: 3)
        let tasks = (0..<10).map { i in
            Task { try await manager.retrieveImage(with: ImageResource(downloadURL: Self.url, cacheKey: "miss-\(i)")) }
        }
        // Three misses load (held at the gate); seven wait for a slot without loading anything.
        try await waitUntil { loader.calls.count == 3 && manager.missSlots.queuedCount == 7 }
        #expect(manager.missSlots.runningCount == 3)
        gate.open()
        for task in tasks { #expect(try await task.value.image.width == 40) }
        #expect(loader.calls.count == 10)
        #expect(manager.missSlots.peakRunningCount == 3)
    }

    @Test func aMissCancelledWhileWaitingForASlotIsAnsweredAtOnceAndNeverLoads() async throws {
        let gate = SharedWorkTests.Gate()
        let loader = ScriptedLoader([Self.url: .init(data: Self.png)], gate: gate)
        let manager = ImageManager(loader: loader, cache: cache(data: InMemoryDataCache()), maximumConcurrentMisses: 1)
        let first = Task { try await manager.retrieveImage(with: ImageResource(downloadURL: Self.url, cacheKey: "first")) }
        try await waitUntil { loader.calls.count == 1 }
        let waiting = Task { try await manager.retrieveImage(with: ImageResource(downloadURL: Self.url, cacheKey: "second")) }
        try await waitUntil { manager.missSlots.queuedCount == 1 }
        waiting.cancel()
        let error = await #expect(throws: MagpieError.self) { try await waiting.value }
        #expect(error?.isCancellation == true)
        gate.open()
        _ = try await first.value
        #expect(loader.calls.count == 1)
    }

    @Test func aLoaderFailureIsRecordedInTheFailedURLListLikeADownloadFailure() async throws {
        let loader = ScriptedLoader([:])
        let manager = ImageManager(loader: loader, cache: cache(data: InMemoryDataCache()))
        await #expect(throws: MagpieError.self) { try await manager.retrieveImage(with: Self.url) }
        let error = await #expect(throws: MagpieError.self) { try await manager.retrieveImage(with: Self.url) }
        guard case .requestFailed(reason: .recentlyFailed)? = error else {
            Issue.record("expected recentlyFailed, got \(String(describing: error))")
            return
        }
        #expect(loader.calls.count == 1)
    }

    @Test func theDataProviderLoaderReadsProvidersAndFileURLsAndRefusesTheNetwork() async throws {
        let folder = try TemporaryFolder()
        defer { folder.cleanUp() }
        let file = folder.url.appendingPathComponent("cat.png")
        try Self.png.write(to: file)
        let manager = ImageManager(loader: DataProviderLoader(), cache: cache(data: InMemoryDataCache()))
        #expect(try await manager.retrieveImage(with: file).image.width == 40)
        let raw = RawImageDataProvider(data: Self.png, cacheKey: "raw-cat")
        #expect(try await manager.retrieveImage(with: .provider(raw)).image.height == 30)
        let error = await #expect(throws: MagpieError.self) { try await manager.retrieveImage(with: Self.url) }
        guard case .requestFailed(reason: .unsupportedScheme)? = error else {
            Issue.record("expected unsupportedScheme, got \(String(describing: error))")
            return
        }
    }
}
