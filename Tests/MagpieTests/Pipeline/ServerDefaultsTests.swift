import Dispatch
import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

/// Defaults a long-running server can live with: failures that are forgotten, writes that are not lost, memory that
/// stays bounded, statistics that count each miss once.
@Suite("Server-safe defaults")
struct ServerDefaultsTests {
    static let url = URL(string: "https://images.test/late.png")!
    static let png: Data = {
        let pixels = try! TestImages.gradient(width: 24, height: 16)
        return try! ImageCoderRegistry.shared.encode(Image(pixels: pixels), as: .png)
    }()

    func cache(_ data: any DataCaching) -> ImageCache {
        ImageCache(name: "defaults", memoryCache: MemoryStorage(config: .init(cleanInterval: 0)), dataCache: data)
    }

    // MARK: Failed-URL list

    @Test func aFileThatAppearsOnTheOriginIsServedOnceItsFailureExpires() async throws {
        let clock = TestClock()
        let loader = ScriptedLoader([:])
        let manager = ImageManager(
            loader: loader, cache: cache(InMemoryDataCache()), failedURLs: FailedURLList(clock: clock.clock))
        #expect(manager.failedURLs.expiration == .seconds(60))
        await #expect(throws: MagpieError.self) { try await manager.retrieveImage(with: Self.url) }
        loader.set(Self.url, .init(data: Self.png))
        clock.advance(59)
        // Still remembered: refused without asking the origin.
        await #expect(throws: MagpieError.self) { try await manager.retrieveImage(with: Self.url) }
        #expect(loader.calls.count == 1)
        clock.advance(2)
        let result = try await manager.retrieveImage(with: Self.url)
        #expect(result.cacheType == .none)
        #expect(loader.calls.count == 2)
        #expect(manager.failedURLs.count == 0)
    }

    @Test func notFoundAnswersMayBeRememberedLongerThanOtherFailures() {
        let clock = TestClock()
        let list = FailedURLList(expiration: .seconds(10), notFoundExpiration: .seconds(600), clock: clock.clock)
        let gone = URL(string: "https://x.test/gone")!, broken = URL(string: "https://x.test/broken")!
        list.record(gone, error: .responseFailed(reason: .badStatus(HTTPResponseInfo(url: gone, statusCode: 410, headers: []))))
        list.record(broken, error: .decodingFailed(reason: .corruptData(.png, message: "bad CRC")))
        #expect(list.count == 2)
        clock.advance(11)
        #expect(list.contains(gone) && !list.contains(broken))
        #expect(list.failure(for: gone)?.statusCode == 410)
        clock.advance(600)
        #expect(list.count == 0)
        let off = FailedURLList(expiration: .zero)
        off.record(broken, error: .decodingFailed(reason: .corruptData(.png, message: "bad CRC")))
        #expect(off.count == 0, "a zero expiration remembers nothing")
    }

    // MARK: No lost writes

    /// A data cache whose writes wait until the test opens its gate, as a slow disk's take a while.
    final class SlowDataCache: DataCaching {
        let inner = InMemoryDataCache()
        let gate = SharedWorkTests.Gate()
        var clock: CacheClock { inner.clock }
        func cachedEntry(forKey key: String, extendingExpiration: ExpirationExtending?) async throws -> DataCacheEntry? {
            try await inner.cachedEntry(forKey: key, extendingExpiration: extendingExpiration)
        }
        func cachedMetadata(forKey key: String) async throws -> DataCacheMetadata? { try await inner.cachedMetadata(forKey: key) }
        func storeData(_ data: Data, forKey key: String, expiration: StorageExpiration?, validators: HTTPValidators) async throws {
            await gate.wait()
            try await inner.storeData(data, forKey: key, expiration: expiration, validators: validators)
        }
        func refreshEntry(forKey key: String, validators: HTTPValidators, expiration: StorageExpiration?) async throws -> Bool {
            try await inner.refreshEntry(forKey: key, validators: validators, expiration: expiration)
        }
        func removeData(forKey key: String) async throws { try await inner.removeData(forKey: key) }
        func removeAllData() async throws { try await inner.removeAllData() }
        func removeExpiredData() async throws -> [String] { try await inner.removeExpiredData() }
        func containsData(forKey key: String) async -> Bool { await inner.containsData(forKey: key) }
        func totalDataSize() async throws -> Int { try await inner.totalDataSize() }
    }

    @Test func shutdownWaitsForTheBackgroundDiskWritesOfEveryCacheItWroteTo() async throws {
        let loader = ScriptedLoader([Self.url: .init(data: Self.png)])
        let main = SlowDataCache(), other = SlowDataCache()
        let manager = ImageManager(loader: loader, cache: cache(main))
        let otherCache = cache(other)
        _ = try await manager.retrieveImage(with: Self.url)
        _ = try await manager.retrieveImage(with: Self.url, options: [.targetCache(otherCache)])
        // The retrievals returned before their writes: nothing is on "disk" yet.
        #expect(main.inner.keys.isEmpty && other.inner.keys.isEmpty)
        #expect(manager.cache.pendingWriteCount == 1 && otherCache.pendingWriteCount == 1)
        let finished = Mutex(false)
        let shutdown = Task {
            await manager.shutdown()
            finished.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(!finished.withLock { $0 }, "shutdown waits for the writes")
        main.gate.open()
        other.gate.open()
        await shutdown.value
        #expect(main.inner.keys == [Self.url.absoluteString])
        #expect(other.inner.keys == [Self.url.absoluteString])
        #expect(manager.cache.pendingWriteCount == 0 && otherCache.pendingWriteCount == 0)
    }

    @Test func aProcessThatExitsRightAfterARetrievalFindsItsEntryOnTheNextRun() async throws {
        let origin = try await OriginFixture.start()
        let folder = try TemporaryFolder()
        let url = origin.url("/img/noise.png")
        func run() async throws -> String {
            let run = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ProcessRun, any Error>) in
                DispatchQueue.global().async {
                    continuation.resume(with: Result { try ProcessRun.built("magpie-short-job", [url, folder.url.path]) })
                }
            }
            #expect(run.status == 0, "\(run.stderr)")
            return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try await run() == "none")
        for _ in 0..<3 { #expect(try await run() == "disk") }
        #expect(origin.requestCount(path: "/img/noise.png") == 1)
        await origin.stop()
        folder.cleanUp()
    }

    @Test func flushWaitsForACompletionHandlerStore() async throws {
        let data = SlowDataCache()
        let cache = cache(data)
        cache.store(Image(pixels: try TestImages.gradient(width: 8, height: 8)), forKey: "k", completionHandler: nil)
        data.gate.open()
        await cache.flush()
        #expect(data.inner.keys == ["k"])
    }

    // MARK: Bounded memory, honest statistics

    @Test func theDefaultMemoryLimitIsAQuarterOfMemoryAtMost512MiB() {
        #expect(MemoryStorage.Config.defaultLimit(available: 64 << 30) == 512 << 20)
        #expect(MemoryStorage.Config.defaultLimit(available: 1 << 30) == 256 << 20)
        #expect(MemoryStorage.Config.defaultTotalCostLimit <= 512 << 20)
        #expect(MemoryStorage.Config().totalCostLimit == MemoryStorage.Config.defaultTotalCostLimit)
    }

    @Test func oneRetrievalCountsOneMemoryMissAndAHitCountsOneHit() async throws {
        let loader = ScriptedLoader([Self.url: .init(data: Self.png)])
        let memory = MemoryStorage(config: .init(cleanInterval: 0))
        let manager = ImageManager(
            loader: loader, cache: ImageCache(name: "stats", memoryCache: memory, dataCache: InMemoryDataCache()))
        _ = try await manager.retrieveImage(with: Self.url, options: [.waitForCache])
        #expect(memory.statistics.misses == 1)
        #expect(memory.statistics.hits == 0)
        _ = try await manager.retrieveImage(with: Self.url)
        #expect(memory.statistics.misses == 1)
        #expect(memory.statistics.hits == 1)
        // A processed variant too: one miss for the variant (the original is not looked up in memory).
        _ = try await manager.retrieveImage(with: Self.url, options: [.processor(BlurImageProcessor(blurRadius: 1)), .waitForCache])
        #expect(memory.statistics.misses == 2)
    }
}
