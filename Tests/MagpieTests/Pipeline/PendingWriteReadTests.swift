import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

/// A retrieval does not overtake a disk write still in flight: with writes in the background (no `.waitForCache`),
/// the next retrieval of the same source waits for the write and finds the bytes, rather than downloading them again.
struct PendingWriteReadTests {
    @Test func aRetrievalRightAfterAnotherFindsTheSourceOnDiskWithoutWaitForCache() async throws {
        let fixture = try await ImageManagerTests.Fixture.start()
        // A data layer whose writes take a while (a busy disk): long enough that a read not waiting for one misses.
        let disk = try DiskStorage(config: DiskStorage.Config(name: "slow", directory: fixture.folder.url))
        let cache = ImageCache(name: "slow", memoryCache: nil, dataCache: SlowWritingDataCache(disk))
        let manager = ImageManager(downloader: fixture.downloader, cache: cache)
        let url = fixture.url("/img/pic.png")
        // No memory layer in the way: the second retrieval must read the data layer, as a server's does.
        let options: [MagpieOption] = [.memoryCacheReads(false), .memoryCacheWrites(false)]
        for round in 0..<3 {
            // Each round starts with the source nowhere: the only entry the second retrieval can find is the first's.
            await manager.cache.flush()
            try await manager.cache.dataCache?.removeData(forKey: url.absoluteString)
            let first = try await manager.retrieveImage(with: url, options: options)
            #expect(first.cacheType == .none)
            let second = try await manager.retrieveImage(with: url, options: options)
            #expect(second.cacheType == .disk, "round \(round)")
        }
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 3)
        await manager.cache.flush()
        try await fixture.stop()
    }

    @Test func aCacheReadWaitsForTheWriteOfItsKeyOnly() async throws {
        let work = PendingWork()
        let gate = AsyncStream<Void>.makeStream()
        let finished = Mutex(false)
        work.start(keys: ["a"]) {
            for await _ in gate.stream { break }
            finished.withLock { $0 = true }
        }
        // Another key does not wait.
        await work.waitUntilFinished(key: "b")
        #expect(finished.withLock { $0 } == false)
        async let waited: Bool = {
            await work.waitUntilFinished(key: "a")
            return finished.withLock { $0 }
        }()
        gate.continuation.yield()
        #expect(await waited == true)
        await work.waitUntilIdle()
        #expect(work.count == 0)
    }
}

/// A data cache that takes 200 ms to begin each write, over a real ``DiskStorage``.
final class SlowWritingDataCache: DataCaching {
    let inner: DiskStorage

    init(_ inner: DiskStorage) { self.inner = inner }

    var clock: CacheClock { inner.clock }

    func cachedEntry(forKey key: String, extendingExpiration: ExpirationExtending?) async throws -> DataCacheEntry? {
        try await inner.cachedEntry(forKey: key, extendingExpiration: extendingExpiration)
    }

    func cachedMetadata(forKey key: String) async throws -> DataCacheMetadata? { try await inner.cachedMetadata(forKey: key) }

    func storeData(_ data: Data, forKey key: String, expiration: StorageExpiration?, validators: HTTPValidators) async throws {
        try await Task.sleep(for: .milliseconds(200))
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
    func flush() async throws { try await inner.flush() }
}
