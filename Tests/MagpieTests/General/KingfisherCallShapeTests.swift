import Dispatch
import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

/// Kingfisher's call shapes, written as a Kingfisher user writes them. The file compiling is half the test (a
/// trailing closure must be the completion handler everywhere, in synchronous and asynchronous code alike); the
/// tests run them against a real origin and check that each closure is what its label says.
@Suite("Kingfisher call shapes")
struct KingfisherCallShapeTests {
    struct Fixture {
        let origin: ImageOrigin
        let folder: TemporaryFolder
        let downloader = ImageDownloader(name: "shapes")

        static func start() async throws -> Fixture {
            Fixture(origin: try await OriginFixture.start(), folder: try TemporaryFolder())
        }

        func url(_ path: String) -> URL { URL(string: origin.url(path))! }

        func manager() -> ImageManager {
            ImageManager(downloader: downloader, cache: ImageCache(name: "shapes", cacheDirectoryURL: folder.url))
        }

        func stop() async throws {
            try await downloader.shutdown()
            await origin.stop()
            folder.cleanUp()
        }
    }

    /// Collects what closures received, to wait for and look at.
    final class Calls: Sendable {
        private let log = Mutex<[String]>([])
        func add(_ entry: String) { log.withLock { $0.append(entry) } }
        var entries: [String] { log.withLock { $0 } }

        func wait(for count: Int) async {
            for _ in 0..<500 where entries.count < count { try? await Task.sleep(for: .milliseconds(10)) }
        }
    }

    static func describe(_ result: Result<RetrieveImageResult, MagpieError>) -> String {
        switch result {
        case .success(let value): "image \(value.cacheType)"
        case .failure(let error): "error \(error.statusCode.map(String.init) ?? "-")"
        }
    }

    // MARK: Written without looking anything up

    /// Every completion-handler shape of Kingfisher, in a synchronous function.
    static func synchronousShapes(manager: ImageManager, target: HeadlessImageTarget, url: URL, calls: Calls) {
        manager.retrieveImage(with: url) { result in calls.add("retrieve \(describe(result))") }
        manager.retrieveImage(with: url, options: nil) { result in calls.add("retrieve nil-options \(describe(result))") }
        manager.retrieveImage(with: url, options: [.callbackQueue(.untouch)], progressBlock: nil) { result in
            calls.add("retrieve progress-nil \(describe(result))")
        }
        manager.retrieveImage(with: url, options: nil, progressBlock: nil, completionHandler: nil)
        target.mg.setImage(with: url)
        target.mg.setImage(with: url, placeholder: nil, options: nil) { result in calls.add("set \(describe(result))") }
        target.mg.setImage(with: url) { _ in calls.add("set done") }
        target.mg.setImage(with: url, completionHandler: nil)
        target.mg.setImage(with: url, placeholder: nil, options: nil, progressBlock: nil, completionHandler: nil)
        target.mg.setImage(with: url, progressBlock: { received, total in _ = (received, total) }) { result in
            calls.add("set with progress \(describe(result))")
        }
        manager.cache.retrieveImage(forKey: url.absoluteString) { result in
            calls.add("cache \((try? result.get())?.cacheType.rawValue ?? "error")")
        }
        manager.cache.retrieveImage(forKey: url.absoluteString, options: nil, callbackQueue: .global()) { _ in calls.add("cache done") }
        manager.cache.calculateDiskStorageSize { result in calls.add("size \((try? result.get()).map { $0 > 0 } ?? false)") }
        _ = ImagePrefetcher(urls: [url]) { skipped, failed, completed in _ = (skipped, failed, completed) }
    }

    /// The same shapes in asynchronous code, where an async overload must not capture the trailing closure.
    static func asynchronousShapes(manager: ImageManager, target: HeadlessImageTarget, url: URL, calls: Calls) async throws {
        manager.retrieveImage(with: url) { result in calls.add("async-context retrieve \(describe(result))") }
        manager.retrieveImage(with: url) { _ in calls.add("async-context retrieve done") }
        target.mg.setImage(with: url) { result in calls.add("async-context set \(describe(result))") }
        let awaited = try await manager.retrieveImage(with: url)
        let withOptions = try await manager.retrieveImage(with: url, options: nil)
        let withProgress = try await manager.retrieveImage(with: url, options: [], progressBlock: { received, total in _ = (received, total) })
        calls.add("awaited \(awaited.cacheType) \(withOptions.cacheType) \(withProgress.cacheType)")
    }

    @Test func trailingClosuresAreCompletionHandlersCalledOnceInSyncAndAsyncCode() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager()
        let target = HeadlessImageTarget()
        target.mg.manager = manager
        let url = fixture.url("/img/pic.png")
        _ = try await manager.retrieveImage(with: url, options: [.waitForCache])
        let calls = Calls()
        Self.synchronousShapes(manager: manager, target: target, url: url, calls: calls)
        try await Self.asynchronousShapes(manager: manager, target: target, url: url, calls: calls)
        await calls.wait(for: 13)
        let entries = calls.entries
        // Each completion closure ran exactly once, with a result (never as a progress handler).
        for expected in [
            "retrieve image memory", "retrieve nil-options image memory", "retrieve progress-nil image memory",
            "cache memory", "cache done", "size true", "async-context retrieve image memory",
            "async-context retrieve done", "awaited memory memory memory",
        ] {
            #expect(entries.filter { $0 == expected }.count == 1, "\(expected) in \(entries)")
        }
        // The binding cancels a target's earlier request when a new one comes: each set completes once, as an image
        // or as not-current.
        #expect(entries.filter { $0 == "set done" }.count == 1, "\(entries)")
        #expect(entries.filter { $0.hasPrefix("set image") || $0.hasPrefix("set error") }.count == 1, "\(entries)")
        #expect(entries.filter { $0.hasPrefix("async-context set") }.count == 1, "\(entries)")
        #expect(fixture.origin.requestCount(path: "/img/pic.png") == 1)
        try await fixture.stop()
    }

    @Test func aTrailingClosureOnSetImageIsCalledOnceOnADownloadAndOnceOnAHit() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager()
        let calls = Calls()
        let target = HeadlessImageTarget()
        target.mg.manager = manager
        // A large body arrives in several chunks: a closure taken for a progress handler would run several times.
        target.mg.setImage(with: fixture.url("/img/noise.png")) { _ in calls.add("done") }
        await calls.wait(for: 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(calls.entries == ["done"])
        target.mg.setImage(with: fixture.url("/img/noise.png")) { _ in calls.add("hit") }
        await calls.wait(for: 2)
        try await Task.sleep(for: .milliseconds(50))
        #expect(calls.entries == ["done", "hit"])
        try await fixture.stop()
    }

    @Test func progressBlockReportsReceivedAndTotalBytes() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager()
        let reports = Mutex<[(Int64, Int64)]>([])
        _ = try await manager.retrieveImage(with: fixture.url("/img/noise.png"), options: nil) { received, total in
            reports.withLock { $0.append((received, total)) }
        }
        let seen = reports.withLock { $0 }
        #expect(!seen.isEmpty)
        #expect(seen.last?.0 == Int64(OriginFixture.noisePNG.count))
        #expect(seen.allSatisfy { $0.1 == Int64(OriginFixture.noisePNG.count) })
        try await fixture.stop()
    }

    // MARK: The rest of the Kingfisher surface

    @Test func modifierSetValueForHTTPHeaderFieldReachesTheOrigin() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager()
        let modifier = AnyModifier { request in
            var request = request
            request.setValue("Bearer abc", forHTTPHeaderField: "Authorization")
            request.setValue("x", forHTTPHeaderField: "X-Removed")
            request.setValue(nil, forHTTPHeaderField: "x-removed")
            return request
        }
        _ = try await manager.retrieveImage(with: fixture.url("/img/photo.jpg"), options: [.requestModifier(modifier)])
        let headers = fixture.origin.lastRequestHeaders(path: "/img/photo.jpg")
        #expect(headers.first { $0.key.lowercased() == "authorization" }?.value == "Bearer abc")
        #expect(!headers.keys.contains { $0.lowercased() == "x-removed" })
        var request = ImageRequest(url: fixture.url("/x"))
        request.addValue("a", forHTTPHeaderField: "Accept")
        request.addValue("b", forHTTPHeaderField: "accept")
        #expect(request.value(forHTTPHeaderField: "ACCEPT") == "a")
        #expect(request.headers.count == 2)
        try await fixture.stop()
    }

    @Test func aCacheInItsOwnFolderIsNamedOnceAndReportsItsDiskSize() async throws {
        let folder = try TemporaryFolder()
        let cache = ImageCache(name: "avatars", cacheDirectoryURL: folder.url)
        #expect(cache.diskStorage?.directoryURL.lastPathComponent == "avatars")
        #expect(cache.diskStorage?.directoryURL.deletingLastPathComponent().standardizedFileURL.path == folder.url.standardizedFileURL.path)
        #expect(try await cache.calculateDiskStorageSize() == 0)
        try await cache.storeToDisk(OriginFixture.png, forKey: "a")
        #expect(try await cache.calculateDiskStorageSize() == UInt(OriginFixture.png.count))
        folder.cleanUp()
    }

    @Test func memoryAndDiskLimitsChangeOnALiveCache() async throws {
        let folder = try TemporaryFolder()
        let cache = ImageCache(name: "live", cacheDirectoryURL: folder.url)
        let image = Image(pixels: try TestImages.gradient(width: 32, height: 32))
        for index in 0..<4 { cache.memoryCache.storeImage(image, forKey: "k\(index)", expiration: nil) }
        #expect(cache.memoryStorage?.count == 4)
        // Kingfisher's line, with `?` as for `diskStorage` (nil for a memory cache that is not a MemoryStorage):
        cache.memoryStorage?.config.totalCostLimit = image.cost * 2
        #expect(cache.memoryStorage?.count == 2)
        #expect(cache.memoryStorage?.config.totalCostLimit == image.cost * 2)
        cache.memoryStorage?.config.countLimit = 1
        #expect(cache.memoryStorage?.count == 1)

        let data = Data(repeating: 7, count: 1000)
        for index in 0..<8 { try await cache.storeToDisk(data, forKey: "d\(index)") }
        #expect(try await cache.diskStorageSize() == 8000)
        cache.diskStorage?.config.sizeLimit = 4000
        await cache.flush()  // the sweep that a lower limit starts
        #expect(try await cache.diskStorageSize() <= 2000)
        #expect(cache.diskStorage?.config.sizeLimit == 4000)
        folder.cleanUp()
    }

    @Test func imageRepresentationsEncodeThroughTheRegistry() throws {
        let image = Image(pixels: try TestImages.gradient(width: 40, height: 30))
        let png = try #require(image.mg.pngRepresentation())
        #expect(png.mg.imageFormat == .png)
        let best = try #require(image.mg.jpegRepresentation(compressionQuality: 1))
        let small = try #require(image.mg.jpegRepresentation(compressionQuality: 0.1))
        #expect(best.mg.imageFormat == .jpeg && small.mg.imageFormat == .jpeg)
        #expect(small.count < best.count)
        #expect(image.mg.gifRepresentation()?.mg.imageFormat == .gif)
        #expect(image.mg.webpRepresentation()?.mg.imageFormat == .webp)
        #expect(image.mg.data(format: .webp, compressionQuality: 0.5)?.mg.imageFormat == .webp)
        #expect(image.mg.data(format: .unknown) == nil)
    }

    /// The obvious subclass: not final, with a mutable property of its own (only `render` touches it).
    class CountingView: ImageTargetBase, @unchecked Sendable {
        var renders = 0
        override func render(_ image: Image?) { renders += 1 }
    }

    @Test func anImageTargetSubclassWithAMutablePropertyLoadsImages() async throws {
        let fixture = try await Fixture.start()
        let view = CountingView()
        view.mg.manager = fixture.manager()
        let calls = Calls()
        view.mg.setImage(with: fixture.url("/img/pic.png")) { result in calls.add(Self.describe(result)) }
        await calls.wait(for: 1)
        #expect(calls.entries == ["image none"])
        #expect(view.displayedImage?.pixelSize == PixelSize(width: 64, height: 48))
        #expect(view.renders == 2)  // the placeholder's clear, then the image
        try await fixture.stop()
    }

    @Test func aRememberedFailureKeepsItsStatusForPatternMatching() async throws {
        let fixture = try await Fixture.start()
        let manager = fixture.manager()
        let missing = fixture.url("/img/missing.png")
        await #expect(throws: MagpieError.self) { try await manager.retrieveImage(with: missing) }
        do {
            _ = try await manager.retrieveImage(with: missing)
            Issue.record("a remembered failure must be refused")
        } catch let error as MagpieError {
            #expect(error.statusCode == 404)
            guard case .requestFailed(reason: .recentlyFailed(missing, previous: .responseFailed(reason: .badStatus(let response)))) = error
            else {
                Issue.record("expected recentlyFailed wrapping a bad status, got \(error)")
                return
            }
            #expect(response.statusCode == 404)
            #expect("\(error)".components(separatedBy: missing.absoluteString).count == 2, "the URL once: \(error)")
        }
        try await fixture.stop()
    }
}
