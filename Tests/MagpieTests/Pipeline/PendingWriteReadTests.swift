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
        // A data layer whose writes wait until the test opens its gate, as a busy disk's take a while.
        let disk = ServerDefaultsTests.SlowDataCache()
        let manager = ImageManager(downloader: fixture.downloader, cache: ImageCache(name: "slow", memoryCache: nil, dataCache: disk))
        let url = fixture.url("/img/pic.png")
        let first = try await manager.retrieveImage(with: url)
        #expect(first.cacheType == .none)
        // The write is still held: the next retrieval must wait for it, not miss and download again.
        let second = Task { try await manager.retrieveImage(with: url) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(disk.inner.keys.isEmpty)
        disk.gate.open()
        #expect(try await second.value.cacheType == .disk)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 1)
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
