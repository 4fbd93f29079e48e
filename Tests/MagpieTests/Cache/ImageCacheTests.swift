import Foundation
import Synchronization
import Testing
@testable import Magpie
@testable import MagpieCore

/// A serializer that counts decodes and can be slowed down, to observe coalescing.
final class CountingSerializer: CacheSerializer, Sendable {
    let decodes = Atomic<Int>(0)
    let delay: Duration
    init(delay: Duration = .zero) { self.delay = delay }
    func data(with image: Image, original: Data?) throws -> Data { try DefaultCacheSerializer.default.data(with: image, original: original) }
    func image(with data: Data, options: ImageDecodingOptions) throws -> Image {
        decodes.add(1, ordering: .relaxed)
        if delay > .zero { usleep(UInt32(delay.components.attoseconds / 1_000_000_000_000)) }
        return try DefaultCacheSerializer.default.image(with: data, options: options)
    }
}

struct ImageCacheTests {
    func makeCache(_ folder: TemporaryFolder, name: String = "images") -> ImageCache {
        ImageCache(name: name, memoryConfig: .init(cleanInterval: 0), diskConfig: .init(name: name, directory: folder.url))
    }

    /// A cache whose only entry, "photo" (an 800x600 JPEG), is on disk and not in memory.
    func cacheHoldingPhotoOnDisk(_ folder: TemporaryFolder) async throws -> ImageCache {
        let cache = makeCache(folder)
        var photo = Image(pixels: try TestImages.gradient(width: 800, height: 600))
        photo.format = .jpeg
        await cache.store(photo, forKey: "photo")
        cache.clearMemoryCache()
        return cache
    }

    func image(_ width: Int = 40, _ height: Int = 30) throws -> Image {
        var image = Image(pixels: try TestImages.gradient(width: width, height: height))
        image.format = .png
        return image
    }

    @Test func storedImagesComeBackFromMemoryThenFromDiskAfterMemoryIsCleared() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let cache = makeCache(folder)
        let source = try image()
        let stored = await cache.store(source, forKey: "https://x.org/a.png")
        #expect((try? stored.diskCacheResult?.get()) != nil)
        #expect(await cache.imageCachedType(forKey: "https://x.org/a.png") == .memory)
        let first = try await cache.retrieveImage(forKey: "https://x.org/a.png")
        #expect(first.cacheType == .memory && first.image?.pixels == source.pixels)
        cache.clearMemoryCache()
        #expect(await cache.imageCachedType(forKey: "https://x.org/a.png") == .disk)
        let second = try await cache.retrieveImage(forKey: "https://x.org/a.png")
        #expect(second.cacheType == .disk && second.image?.pixels == source.pixels)
        #expect(await cache.imageCachedType(forKey: "https://x.org/a.png") == .memory, "a disk hit is promoted to memory")
        #expect(try await cache.retrieveImage(forKey: "https://x.org/other.png").cacheType == .none)
    }

    @Test func processedVariantsNeverCollideWithTheOriginal() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let cache = makeCache(folder)
        let original = try image(40, 30), thumbnail = try image(8, 6)
        await cache.store(original, forKey: "k")
        await cache.store(thumbnail, forKey: "k", processorIdentifier: "resize(8x6)")
        cache.clearMemoryCache()
        #expect(try await cache.retrieveImage(forKey: "k").image?.width == 40)
        #expect(try await cache.retrieveImage(forKey: "k", options: .init(processorIdentifier: "resize(8x6)")).image?.width == 8)
        #expect(cache.cachePath(forKey: "k") != cache.cachePath(forKey: "k", processorIdentifier: "resize(8x6)"))
        #expect(ImageCache.computedKey("k", processorIdentifier: "p") == "k@p")
    }

    @Test func concurrentDiskHitsForOneKeyDecodeOnce() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let cache = makeCache(folder)
        await cache.store(try image(), forKey: "shared")
        cache.clearMemoryCache()
        let serializer = CountingSerializer(delay: .milliseconds(100))
        let options = ImageCacheRetrievalOptions(cacheSerializer: serializer)
        try await withThrowingTaskGroup(of: CacheType.self) { group in
            for _ in 0..<8 { group.addTask { try await cache.retrieveImage(forKey: "shared", options: options).cacheType } }
            for try await type in group { #expect(type != .none) }
        }
        #expect(serializer.decodes.load(ordering: .relaxed) == 1)
    }

    @Test func aDiskHitReadsAndDecodesInOneJobWhenTheCacheDecodesOnItsStoragesExecutor() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let io = BoundedExecutor(name: "test.io", width: 2), coding = BoundedExecutor(name: "test.coding", width: 2)
        let disk = try DiskStorage(config: .init(name: "jobs", directory: folder.url, ioExecutor: io))
        let shared = ImageCache(name: "jobs", memoryCache: nil, dataCache: disk, codingExecutor: io)
        let separate = ImageCache(name: "jobs", memoryCache: nil, dataCache: disk, codingExecutor: coding)
        let source = try image()
        await shared.store(source, forKey: "photo")
        let (ioBefore, codingBefore) = (io.startedCount, coding.startedCount)
        let first = try await shared.retrieveImage(forKey: "photo")
        #expect(first.cacheType == .disk && first.image?.pixels == source.pixels)
        #expect(io.startedCount - ioBefore == 1, "the read and the decode share one job of the storage's executor")
        let second = try await separate.retrieveImage(forKey: "photo")
        #expect(second.cacheType == .disk && second.image?.pixels == source.pixels)
        #expect(io.startedCount - ioBefore == 2 && coding.startedCount - codingBefore == 1,
                "with its own coding executor, the cache decodes there after the storage's read")
    }

    @Test func aDecodeThatFailsInTheReadingJobIsADecodingErrorNotAReadError() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try DiskStorage(config: .init(name: "bad", directory: folder.url))
        let cache = ImageCache(name: "bad", memoryCache: nil, dataCache: disk, codingExecutor: disk.config.ioExecutor)
        try await disk.storeData(Data("not an image".utf8), forKey: "junk", expiration: nil, validators: .init())
        await #expect {
            _ = try await cache.retrieveImage(forKey: "junk")
        } throws: { error in
            guard case .decodingFailed? = error as? MagpieError else { return false }
            return true
        }
    }

    @Test func diskHitsHonourDecodingOptions() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let cache = try await cacheHoldingPhotoOnDisk(folder)
        let options = ImageCacheRetrievalOptions(decodingOptions: .init(targetSize: PixelSize(width: 100, height: 100), scale: 2))
        let result = try await cache.retrieveImage(forKey: "photo", options: options)
        #expect(result.image.map { $0.width < 800 && $0.width >= 100 && $0.scale == 2 } == true)
    }

    @Test func unwritableDiskLeavesTheMemoryLayerWorking() async throws {
        let cache = ImageCache(name: "broken", diskConfig: .init(name: "broken", directory: URL(fileURLWithPath: "/proc/magpie-no")))
        #expect(cache.diskStorage == nil && cache.diskError != nil)
        let result = await cache.store(try image(), forKey: "k")
        if case .failure(.cacheFailed) = result.diskCacheResult {} else { Issue.record("disk failure not reported: \(String(describing: result.diskCacheResult))") }
        #expect(try await cache.retrieveImage(forKey: "k").cacheType == .memory)
    }

    @Test func removingAndCleaningAffectTheChosenLayers() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let cache = makeCache(folder)
        await cache.store(try image(), forKey: "a")
        await cache.store(try image(), forKey: "b")
        try await cache.removeImage(forKey: "a", fromMemory: true, fromDisk: false)
        #expect(await cache.imageCachedType(forKey: "a") == .disk)
        try await cache.removeImage(forKey: "a")
        #expect(await cache.imageCachedType(forKey: "a") == .none)
        #expect(try await cache.diskStorageSize() > 0)
        try await cache.clearDiskCache()
        #expect(try await cache.diskStorageSize() == 0)
        #expect(await cache.imageCachedType(forKey: "b") == .memory)
        await cache.store(try image(), forKey: "c", memoryExpiration: .expired, diskExpiration: .expired)
        #expect(!(await cache.isCached(forKey: "c")))
    }

    @Test func completionHandlerVariantsCallBackOnceOnTheGivenQueue() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let cache = makeCache(folder)
        let queue = DispatchQueue(label: "callbacks")
        let stored: CacheStoreResult = await withCheckedContinuation { continuation in
            cache.store(try! image(), forKey: "k", callbackQueue: queue) { continuation.resume(returning: $0) }
        }
        #expect((try? stored.diskCacheResult?.get()) != nil)
        let found: CacheType = await withCheckedContinuation { continuation in
            cache.retrieveImage(forKey: "k", callbackQueue: queue) { result in
                dispatchPrecondition(condition: .onQueue(queue))
                continuation.resume(returning: (try? result.get())?.cacheType ?? .none)
            }
        }
        #expect(found == .memory)
    }
}

import CoreMetrics
import MetricsTestKit

extension ImageCacheTests {
    @Test func hitsMissesEvictionsAndBytesAreReportedAsMetrics() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let metrics = TestMetrics()
        let entrySize = try DefaultCacheSerializer.default.data(with: try image(64, 64), original: nil).count
        let limit = entrySize * 5 / 2
        let cache = withMetricsFactory(metrics) {
            ImageCache(name: "metered", memoryConfig: .init(cleanInterval: 0),
                       diskConfig: .init(name: "metered", directory: folder.url, sizeLimit: limit))
        }
        for i in 0..<8 { await cache.store(try image(64, 64), forKey: "k\(i)") }  // 8 entries over a 2.5-entry limit
        _ = try await cache.retrieveImage(forKey: "k7")
        _ = try await cache.retrieveImage(forKey: "absent")
        let dims = [("cache", "metered")]
        #expect(try metrics.expectCounter("magpie_cache_hits", dims + [("layer", "memory")]).totalValue == 1)
        #expect(try metrics.expectCounter("magpie_cache_misses", dims + [("layer", "disk")]).totalValue == 1)
        // The event stream is consumed asynchronously: wait (bounded) for the evictions to show.
        var evictions: Int64 = 0
        for _ in 0..<200 where evictions == 0 {
            evictions = (try? metrics.expectCounter("magpie_cache_evictions", dims + [("layer", "disk")]).totalValue) ?? 0
            if evictions == 0 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(evictions > 0)
        let bytes = try metrics.expectGauge("magpie_cache_bytes", dims + [("layer", "disk")]).lastValue ?? -1
        #expect(bytes > 0 && bytes <= Double(limit))
    }
}

extension ImageCacheTests {
    @Test func callersWithDifferentDecodingOptionsGetTheirOwnVariant() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let cache = try await cacheHoldingPhotoOnDisk(folder)
        let slow = CountingSerializer(delay: .milliseconds(100))
        let small = ImageCacheRetrievalOptions(decodingOptions: .init(targetSize: PixelSize(width: 100, height: 100)), cacheSerializer: slow)
        let full = ImageCacheRetrievalOptions(cacheSerializer: slow)
        async let first = cache.retrieveImage(forKey: "photo", options: full)
        async let second = cache.retrieveImage(forKey: "photo", options: small)
        let (a, b) = try await (first, second)
        #expect(a.image?.width == 800)
        #expect(b.image.map { $0.width < 800 } == true)
        // Later callers find the variant they asked for in memory.
        #expect(try await cache.retrieveImage(forKey: "photo").image?.width == 800)
        #expect(try await cache.retrieveImage(forKey: "photo", options: small).image.map { $0.width < 800 } == true)
    }
}
