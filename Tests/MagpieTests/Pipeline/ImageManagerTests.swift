import Foundation
import MagpieOrigin
import Testing

@testable import Magpie
@testable import MagpieCore

@Suite("ImageManager: memory → disk → revalidate → download → store")
struct ImageManagerTests {
    struct Fixture {
        let origin: ImageOrigin
        let folder: TemporaryFolder
        let clock = TestClock(start: Date())
        let downloader = ImageDownloader(name: "manager")

        static func start() async throws -> Fixture {
            Fixture(origin: try await OriginFixture.start(), folder: try TemporaryFolder())
        }

        /// A cache over the fixture's folder; a second one sees the first one's disk entries.
        func cache(name: String = "manager") -> ImageCache {
            ImageCache(name: name, diskConfig: DiskStorage.Config(name: name, directory: folder.url, expiration: .seconds(1000), clock: clock.clock))
        }

        func url(_ path: String) -> URL { URL(string: origin.url(path))! }

        /// A manager over `cache` that waits for disk writes, so a test can look at the disk at once.
        func manager(_ cache: ImageCache) -> ImageManager {
            let manager = ImageManager(downloader: downloader, cache: cache)
            manager.defaultOptions = [.waitForCache]
            return manager
        }

        func stop() async throws {
            try await downloader.shutdown()
            await origin.stop()
            folder.cleanUp()
        }
    }

    @Test func downloadThenMemoryThenDiskAcrossManagers() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let url = fixture.url("/img/pic.png")
        let first = try await manager.retrieveImage(with: url)
        #expect(first.cacheType == .none)
        #expect(first.originalData == OriginFixture.png)
        #expect(first.image.pixelSize == PixelSize(width: 64, height: 48))
        #expect(try await manager.retrieveImage(with: url).cacheType == .memory)
        let fresh = fixture.manager(fixture.cache())
        let fromDisk = try await fresh.retrieveImage(with: url)
        #expect(fromDisk.cacheType == .disk)
        #expect(fromDisk.image.pixelSize == PixelSize(width: 64, height: 48))
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 1)
        try await fixture.stop()
    }

    @Test func okResponseStoresValidatorsAndMaxAgeWithTheDiskEntry() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = fixture.manager(cache)
        let url = fixture.url("/img/pic.png")
        _ = try await manager.retrieveImage(with: url)
        let entry = try #require(try cache.diskStorage?.metadata(forKey: url.absoluteString))
        #expect(entry.validators.etag == OriginAsset.strongETag(for: [UInt8](OriginFixture.png)))
        #expect(entry.validators.lastModified == OriginAsset.defaultLastModified)
        #expect(entry.validators.maxAge == 600)
        #expect(entry.validators.contentType == "image/png")
        try await fixture.stop()
    }

    @Test func revalidationWith304RefreshesTheEntryAndTransfersNoBody() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let url = fixture.url("/img/pic.png")
        _ = try await fixture.manager(cache).retrieveImage(with: url)
        let before = try #require(try cache.diskStorage?.metadata(forKey: url.absoluteString))
        fixture.clock.advance(500)
        let bodyBytes = fixture.origin.bodyBytesSent

        let fresh = fixture.manager(fixture.cache())
        let result = try await fresh.retrieveImage(with: url, options: [.revalidate])
        #expect(result.revalidated)
        #expect(result.cacheType == .disk)
        #expect(result.image.pixelSize == PixelSize(width: 64, height: 48))
        #expect(result.downloadMetrics?.bytesReceived == 0)
        #expect(fixture.origin.bodyBytesSent == bodyBytes)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 2)
        let after = try #require(try cache.diskStorage?.metadata(forKey: url.absoluteString))
        #expect(after.expiration == before.expiration.addingTimeInterval(500))
        // Same validators; the exchange's times are the 304's now (the entry's age restarts from them).
        #expect(after.validators.etag == before.validators.etag && after.validators.lastModified == before.validators.lastModified)
        #expect(after.validators.cacheControl == before.validators.cacheControl)
        #expect(after.validators.responseTime == before.validators.responseTime.map { $0.addingTimeInterval(500) })
        try await fixture.stop()
    }

    @Test func revalidationOfAChangedResourceReplacesTheEntry() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = fixture.manager(cache)
        let url = fixture.url("/img/pic.png")
        _ = try await manager.retrieveImage(with: url)
        fixture.origin.setAsset(
            OriginAsset(bytes: [UInt8](OriginFixture.jpeg), contentType: "image/jpeg", lastModified: "Thu, 22 Oct 2015 07:28:00 GMT"),
            forName: "pic.png")
        let result = try await manager.retrieveImage(with: url, options: [.revalidate])
        #expect(!result.revalidated)
        #expect(result.cacheType == .none)
        #expect(result.image.pixelSize == PixelSize(width: 80, height: 60))
        #expect(try cache.diskStorage?.value(forKey: url.absoluteString) == OriginFixture.jpeg)
        #expect(try await manager.retrieveImage(with: url).image.pixelSize == PixelSize(width: 80, height: 60))
        try await fixture.stop()
    }

    @Test func revalidateWithoutValidatorsFallsBackToTheCache() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = fixture.manager(cache)
        let key = "no-validators"
        await cache.store(Image(pixels: try TestImages.gradient(width: 8, height: 8)), original: OriginFixture.png, forKey: key)
        let resource = ImageResource(downloadURL: fixture.url("/img/photo.jpg"), cacheKey: key)
        let result = try await manager.retrieveImage(with: resource, options: [.revalidate])
        #expect(!result.revalidated && result.cacheType == .memory)
        #expect(fixture.origin.totalRequests == 0)
        try await fixture.stop()
    }

    @Test func onlyFromCacheFailsWithNotCachedWithoutARequest() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let url = fixture.url("/img/pic.png")
        let error = await magpieError { try await manager.retrieveImage(with: url, options: [.onlyFromCache]) }
        #expect(error.map { if case .cacheFailed(.notCached(url.absoluteString)) = $0 { true } else { false } } == true)
        #expect(fixture.origin.totalRequests == 0)
        try await fixture.stop()
    }

    @Test func forceRefreshDownloadsAgain() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let url = fixture.url("/img/pic.png")
        _ = try await manager.retrieveImage(with: url)
        let again = try await manager.retrieveImage(with: url, options: [.forceRefresh])
        #expect(again.cacheType == .none)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 2)
        try await fixture.stop()
    }

    @Test func cacheMemoryOnlyLeavesTheDiskEmpty() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = fixture.manager(cache)
        let url = fixture.url("/img/pic.png")
        _ = try await manager.retrieveImage(with: url, options: [.cacheMemoryOnly])
        #expect(try cache.diskStorage?.count() == 0)
        #expect(try await manager.retrieveImage(with: url).cacheType == .memory)
        try await fixture.stop()
    }

    @Test func providerSourcesAreDecodedAndCachedUnderTheirKey() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let manager = fixture.manager(cache)
        let source = Source.provider(RawImageDataProvider(data: OriginFixture.jpeg, cacheKey: "raw-photo"))
        let first = try await manager.retrieveImage(with: source)
        #expect(first.cacheType == .none && first.image.pixelSize == PixelSize(width: 80, height: 60))
        #expect(try await manager.retrieveImage(with: source).cacheType == .memory)
        #expect(try cache.diskStorage?.value(forKey: "raw-photo") == OriginFixture.jpeg)
        try await fixture.stop()
    }

    @Test func downloadErrorsReachTheCaller() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager(fixture.cache())
        let error = await magpieError { try await manager.retrieveImage(with: fixture.url("/img/corrupt.png")) }
        #expect(error.map { if case .responseFailed(.undecodable) = $0 { true } else { false } } == true)
        try await fixture.stop()
    }
}

extension ImageManagerTests {
    @Test func onlyFromCacheWinsOverRevalidate() async throws {
        let fixture = try await Fixture.start()
        let cache = fixture.cache()
        let url = fixture.url("/img/pic.png")
        _ = try await fixture.manager(cache).retrieveImage(with: url)
        let result = try await fixture.manager(fixture.cache())
            .retrieveImage(with: url, options: [.revalidate, .onlyFromCache])
        #expect(result.cacheType == .disk && !result.revalidated)
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 1)
        try await fixture.stop()
    }
}
