import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore
import MagpieOrigin

/// Per-request cache layers (Nuke's model): each of memory reads, memory writes, disk reads and disk writes can be
/// turned off for one retrieval, and the others keep working.
@Suite struct CacheAccessTests {
    struct Setup {
        let origin: ImageOrigin
        let folder: TemporaryFolder
        let downloader = ImageDownloader(name: "cache-access")

        func cache() -> ImageCache {
            ImageCache(name: "access", diskConfig: DiskStorage.Config(name: "access", directory: folder.url))
        }

        func manager(_ cache: ImageCache) -> ImageManager {
            let manager = ImageManager(downloader: downloader, cache: cache)
            manager.defaultOptions = [.waitForCache]
            return manager
        }

        var url: URL { URL(string: origin.url("/img/pic.png"))! }
        var requests: Int { origin.requestCount(path: "/img/pic.png") }
    }

    func withSetup(_ body: (Setup) async throws -> Void) async throws {
        let setup = Setup(origin: try await OriginFixture.start(), folder: try TemporaryFolder())
        do {
            try await body(setup)
        } catch {
            try? await setup.downloader.shutdown()
            await setup.origin.stop()
            setup.folder.cleanUp()
            throw error
        }
        try await setup.downloader.shutdown()
        await setup.origin.stop()
        setup.folder.cleanUp()
    }

    @Test func withoutMemoryWritesTheImageGoesToDiskOnly() async throws {
        try await withSetup { (s: Setup) async throws in
            let cache = s.cache()
            _ = try await s.manager(cache).retrieveImage(with: s.url, options: [.memoryCacheWrites(false)])
            #expect(!cache.memoryCache.containsImage(forKey: s.url.absoluteString))
            #expect(await cache.isCached(forKey: s.url.absoluteString))
            // A disk hit without memory writes does not fill memory either.
            #expect(try await s.manager(cache).retrieveImage(with: s.url, options: [.memoryCacheWrites(false)]).cacheType == .disk)
            #expect(!cache.memoryCache.containsImage(forKey: s.url.absoluteString))
        }
    }

    @Test func withoutDiskWritesTheImageStaysInMemoryOnly() async throws {
        try await withSetup { (s: Setup) async throws in
            let cache = s.cache()
            _ = try await s.manager(cache).retrieveImage(with: s.url, options: [.diskCacheWrites(false)])
            #expect(cache.memoryCache.containsImage(forKey: s.url.absoluteString))
            #expect(await cache.dataCache?.containsData(forKey: s.url.absoluteString) == false)
            #expect(try await s.manager(s.cache()).retrieveImage(with: s.url).cacheType == .none)
            #expect(s.requests == 2)
        }
    }

    @Test func withoutMemoryReadsAMemoryEntryIsPassedOverForTheDisk() async throws {
        try await withSetup { (s: Setup) async throws in
            let cache = s.cache()
            let manager = s.manager(cache)
            _ = try await manager.retrieveImage(with: s.url)
            #expect(try await manager.retrieveImage(with: s.url).cacheType == .memory)
            #expect(try await manager.retrieveImage(with: s.url, options: [.memoryCacheReads(false)]).cacheType == .disk)
        }
    }

    @Test func withoutDiskReadsADiskEntryIsPassedOverForTheNetwork() async throws {
        try await withSetup { (s: Setup) async throws in
            _ = try await s.manager(s.cache()).retrieveImage(with: s.url)
            let result = try await s.manager(s.cache()).retrieveImage(with: s.url, options: [.diskCacheReads(false)])
            #expect(result.cacheType == .none && s.requests == 2)
        }
    }

    @Test func anOptionSetTurnsLayersOffTogetherAndLaterOptionsWin() async throws {
        try await withSetup { (s: Setup) async throws in
            let cache = s.cache()
            let manager = s.manager(cache)
            _ = try await manager.retrieveImage(with: s.url, options: [.cacheAccess(.none)])
            let cached = await cache.isCached(forKey: s.url.absoluteString)
            #expect(!cache.memoryCache.containsImage(forKey: s.url.absoluteString) && !cached)
            _ = try await manager.retrieveImage(with: s.url, options: [.cacheAccess(.none), .diskCacheWrites(true)])
            #expect(!cache.memoryCache.containsImage(forKey: s.url.absoluteString))
            #expect(await cache.dataCache?.containsData(forKey: s.url.absoluteString) == true)
            #expect(s.requests == 2)
        }
    }
}
