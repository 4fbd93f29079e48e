import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore
import MagpieOrigin

/// Bodies past the spool threshold go to a file and come back mapped; an interrupted one is resumed with
/// `Range` + `If-Range`, and started over when the origin's body changed. Real origin, real files.
@Suite struct LargeBodyTests {
    /// A downloader that spools bodies over 64 KiB into `folder`.
    static func downloader(_ folder: TemporaryFolder, limit: Int = 50 * 1024 * 1024) -> ImageDownloader {
        var configuration = ImageDownloader.Configuration()
        configuration.bodyFileThreshold = 64 * 1024
        configuration.spoolDirectory = folder.url
        configuration.maximumResponseSize = limit
        return ImageDownloader(name: "spool", configuration: configuration)
    }

    /// Serves `asset` as `/img/big.png` cut after 100,000 bytes and downloads it once (which fails); returns its URL.
    static func downloadCutShort(_ asset: inout OriginAsset, origin: ImageOrigin, downloader: ImageDownloader) async throws -> URL {
        asset.cutAfter = 100_000
        origin.setAsset(asset, forName: "big.png")
        let url = URL(string: origin.url("/img/big.png"))!
        await #expect(throws: MagpieError.self) { _ = try await downloader.downloadData(with: url) }
        return url
    }

    static func files(_ folder: TemporaryFolder) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.url.path)) ?? []).sorted()
    }

    /// Runs `body` with an origin, a spooling downloader and a folder, and always cleans up.
    func withSetup(limit: Int = 50 * 1024 * 1024, _ body: (ImageOrigin, ImageDownloader, TemporaryFolder) async throws -> Void) async throws {
        let origin = try await OriginFixture.start()
        let folder = try TemporaryFolder()
        let downloader = Self.downloader(folder, limit: limit)
        do {
            try await body(origin, downloader, folder)
        } catch {
            try? await downloader.shutdown()
            await origin.stop()
            folder.cleanUp()
            throw error
        }
        try await downloader.shutdown()
        await origin.stop()
        folder.cleanUp()
    }

    @Test func contentRangeGivesTheFirstBytesPositionAndTheTotal() {
        func info(_ value: String) -> HTTPResponseInfo {
            HTTPResponseInfo(url: URL(string: "http://a.example/x.png")!, statusCode: 206, headers: [HTTPHeaderField(name: "Content-Range", value: value)])
        }
        #expect(HTTPTransfer.contentRangeStart(info("bytes 100-199/200")) == 100)
        #expect(HTTPTransfer.contentRangeTotal(info("bytes 100-199/200")) == 200)
        #expect(HTTPTransfer.contentRangeTotal(info("bytes 100-199/*")) == nil)
        #expect(HTTPTransfer.contentRangeStart(info("items 1-2/3")) == nil)
        #expect(HTTPTransfer.contentRangeStart(info("bytes 100-199")) == nil)
    }

    @Test func aDeclaredLargeBodyIsSpooledAndComesBackWhole() async throws {
        try await withSetup { (origin: ImageOrigin, downloader: ImageDownloader, folder: TemporaryFolder) async throws in
            let result = try await downloader.downloadData(with: URL(string: origin.url("/img/noise.png"))!)
            #expect(result.data == OriginFixture.noisePNG)
            #expect(downloader.statistics.spooledBodies == 1)
            // The file is unlinked once mapped: nothing left behind.
            #expect(Self.files(folder).isEmpty)
        }
    }

    @Test func aSmallBodyStaysInMemory() async throws {
        try await withSetup { (origin: ImageOrigin, downloader: ImageDownloader, _: TemporaryFolder) async throws in
            let result = try await downloader.downloadData(with: URL(string: origin.url("/img/pic.png"))!)
            #expect(result.data == OriginFixture.png)
            #expect(downloader.statistics.spooledBodies == 0)
        }
    }

    @Test func aBodyOfUnknownLengthMovesToAFileOncePastTheThreshold() async throws {
        try await withSetup { (origin: ImageOrigin, downloader: ImageDownloader, folder: TemporaryFolder) async throws in
            let result = try await downloader.downloadData(with: URL(string: origin.url("/huge?bytes=300000"))!)
            #expect(result.data.count == 300_000 && result.data.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
            #expect(downloader.statistics.spooledBodies == 1)
            #expect(Self.files(folder).isEmpty)
        }
    }

    @Test func theSizeLimitStillHoldsForSpooledBodiesAndLeavesNoFile() async throws {
        try await withSetup(limit: 200_000) { (origin: ImageOrigin, downloader: ImageDownloader, folder: TemporaryFolder) async throws in
            await #expect(throws: MagpieError.self) {
                _ = try await downloader.downloadData(with: URL(string: origin.url("/huge?bytes=300000"))!)
            }
            #expect(Self.files(folder).isEmpty)
        }
    }

    @Test func aCutDownloadIsResumedWithRangeAndIfRangeAndTransfersOnlyTheRest() async throws {
        try await withSetup { (origin: ImageOrigin, downloader: ImageDownloader, folder: TemporaryFolder) async throws in
            var asset = OriginAsset(bytes: [UInt8](OriginFixture.noisePNG), contentType: "image/png")
            let url = try await Self.downloadCutShort(&asset, origin: origin, downloader: downloader)
            // What arrived is kept, with what resuming needs. (The origin sent 100,000 bytes; how many of them the client
            // had read when the connection closed depends on buffering, so the kept size is read back.)
            #expect(Self.files(folder).filter { $0.hasSuffix(".part") || $0.hasSuffix(".json") }.count == 2)
            let part = try #require(Self.files(folder).first { $0.hasSuffix(".part") })
            let kept = try #require(try FileManager.default.attributesOfItem(atPath: folder.url.appendingPathComponent(part).path)[.size] as? Int)
            #expect(kept > 0 && kept <= 100_000)
            asset.cutAfter = nil
            origin.setAsset(asset, forName: "big.png")
            let before = origin.bodyBytesSent
            let result = try await downloader.downloadData(with: url)
            #expect(result.data == OriginFixture.noisePNG)
            #expect(origin.bodyBytesSent - before == OriginFixture.noisePNG.count - kept)
            let headers = origin.lastRequestHeaders(path: "/img/big.png")
            #expect(headers["range"] == "bytes=\(kept)-" && headers["if-range"] == asset.etag)
            #expect(downloader.statistics.resumedBodies == 1)
            #expect(Self.files(folder).isEmpty)
        }
    }

    @Test func aResumeStartsOverWhenTheOriginsBodyChanged() async throws {
        try await withSetup { (origin: ImageOrigin, downloader: ImageDownloader, folder: TemporaryFolder) async throws in
            var asset = OriginAsset(bytes: [UInt8](OriginFixture.noisePNG), contentType: "image/png")
            let url = try await Self.downloadCutShort(&asset, origin: origin, downloader: downloader)
            // New bytes, new ETag: If-Range no longer matches, so the origin sends all of it (200).
            var changed = [UInt8](OriginFixture.noisePNG)
            changed[changed.count - 100] ^= 0xFF
            origin.setAsset(OriginAsset(bytes: changed, contentType: "image/png"), forName: "big.png")
            let before = origin.bodyBytesSent
            let result = try await downloader.downloadData(with: url)
            #expect(result.data == Data(changed))
            #expect(origin.bodyBytesSent - before == changed.count)
            #expect(downloader.statistics.resumedBodies == 0)
            #expect(Self.files(folder).isEmpty)
        }
    }

    @Test func aRangeThePartCannotHaveStartsOver() async throws {
        try await withSetup { (origin: ImageOrigin, downloader: ImageDownloader, _: TemporaryFolder) async throws in
            var asset = OriginAsset(bytes: [UInt8](OriginFixture.noisePNG), contentType: "image/png", etag: "\"same\"")
            let url = try await Self.downloadCutShort(&asset, origin: origin, downloader: downloader)
            // Same ETag (a misbehaving origin), but now shorter than what we have: 416, then the whole body.
            let small = [UInt8](OriginFixture.png)
            origin.setAsset(OriginAsset(bytes: small, contentType: "image/png", etag: "\"same\""), forName: "big.png")
            #expect(try await downloader.downloadData(with: url).data == Data(small))
        }
    }

    @Test func aBodyWithoutValidatorsIsNotKeptToResume() async throws {
        try await withSetup { (origin: ImageOrigin, downloader: ImageDownloader, folder: TemporaryFolder) async throws in
            var asset = OriginAsset(bytes: [UInt8](OriginFixture.noisePNG), contentType: "image/png", lastModified: nil)
            asset.etag = nil
            _ = try await Self.downloadCutShort(&asset, origin: origin, downloader: downloader)
            #expect(Self.files(folder).isEmpty)
        }
    }

    @Test func aSpoolFolderThatCannotBeMadeFailsTheDownloadNotTheCache() async throws {
        let origin = try await OriginFixture.start()
        let folder = try TemporaryFolder()
        defer { folder.cleanUp() }
        // A folder below a regular file cannot be made (ENOTDIR), whoever runs the test.
        let blocker = folder.url.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        var configuration = ImageDownloader.Configuration()
        configuration.bodyFileThreshold = 64 * 1024
        configuration.spoolDirectory = blocker.appendingPathComponent("spool")
        let downloader = ImageDownloader(name: "spool-unwritable", configuration: configuration)
        let url = URL(string: origin.url("/img/noise.png"))!
        let error = await magpieError { try await downloader.downloadData(with: url) }
        guard case .requestFailed(reason: .spoolFailed(let failed, let path, _))? = error else {
            Issue.record("expected a spool failure, got \(String(describing: error))")
            try await downloader.shutdown()
            await origin.stop()
            return
        }
        #expect(failed == url && path == blocker.appendingPathComponent("spool").path)
        #expect(error.map(FailedURLList.isPermanent) == false, "the local disk's fault: the URL is not remembered as failed")
        #expect(error?.isTransient == false)
        // A small body never touches the spool folder.
        #expect(try await downloader.downloadData(with: URL(string: origin.url("/img/pic.png"))!).data == OriginFixture.png)
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func thePipelineSpoolsIntoTheDataCachesFolderAndStoresTheResult() async throws {
        let origin = try await OriginFixture.start()
        let folder = try TemporaryFolder()
        defer { folder.cleanUp() }
        var configuration = ImageDownloader.Configuration()
        configuration.bodyFileThreshold = 64 * 1024
        let downloader = ImageDownloader(name: "spool-pipeline", configuration: configuration)
        let cache = ImageCache(name: "spool", diskConfig: DiskStorage.Config(name: "spool", directory: folder.url))
        let manager = ImageManager(downloader: downloader, cache: cache)
        let result = try await manager.retrieveImage(with: URL(string: origin.url("/img/noise.png"))!, options: [.waitForCache])
        #expect(result.image.width == 256 && downloader.statistics.spooledBodies == 1)
        #expect(await cache.isCached(forKey: origin.url("/img/noise.png")))
        let spool = try #require(cache.diskStorage?.spoolDirectory)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: spool.path)) ?? ["missing"]).isEmpty)
        await manager.shutdown()
        try await downloader.shutdown()
        await origin.stop()
    }
}
