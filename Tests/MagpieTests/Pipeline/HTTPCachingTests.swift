import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore
import MagpieOrigin

/// RFC 9111 through the whole pipeline (`.respectCacheControl`): a scripted origin on 127.0.0.1 whose headers each
/// test sets, a data cache on a clock the test moves (started at the real time, like the origin's `Date`), and a
/// check of how each retrieval was served and how many requests reached the origin.
@Suite struct HTTPCachingTests {
    struct Fixture {
        let origin: ImageOrigin
        let folder: TemporaryFolder
        let clock: TestClock
        let downloader: ImageDownloader
        let cache: ImageCache
        let manager: ImageManager

        static func start() async throws -> Fixture {
            var configuration = ImageDownloader.Configuration()
            // A refused connection fails after the connect timeout (AsyncHTTPClient retries until then).
            configuration.connectTimeout = .milliseconds(500)
            configuration.downloadTimeout = .seconds(10)
            let folder = try TemporaryFolder()
            let clock = TestClock(start: Date())
            let cache = ImageCache(name: "http", diskConfig: DiskStorage.Config(
                name: "http", directory: folder.url, expiration: .days(30), clock: clock.clock))
            let downloader = ImageDownloader(name: "http-caching", configuration: configuration)
            let manager = ImageManager(downloader: downloader, cache: cache)
            manager.defaultOptions = [.waitForCache, .respectCacheControl]
            return Fixture(
                origin: try await OriginFixture.start(), folder: folder, clock: clock, downloader: downloader, cache: cache,
                manager: manager)
        }

        /// Serves `headers` (and a strong ETag unless `etag` is nil) for `/img/NAME` with the fixture PNG or `bytes`.
        func serve(
            _ name: String, _ headers: [String: String], bytes: Data = OriginFixture.png, etag: Bool = true,
            lastModified: String? = nil, failure: Int? = nil
        ) {
            var asset = OriginAsset(bytes: [UInt8](bytes), contentType: "image/png", lastModified: lastModified)
            if !etag { asset.etag = nil }
            asset.headers = headers
            asset.failureStatus = failure
            origin.setAsset(asset, forName: name)
        }

        func url(_ name: String) -> URL { URL(string: origin.url("/img/\(name)"))! }
        func requests(_ name: String) -> Int { origin.requestCount(path: "/img/\(name)") }

        func get(_ name: String, _ options: [MagpieOption] = []) async throws -> RetrieveImageResult {
            try await manager.retrieveImage(with: url(name), options: options)
        }

        /// A retrieval by a fresh manager over the same folder (no memory entry): what another process would get.
        func getFromDisk(_ name: String, _ options: [MagpieOption] = []) async throws -> RetrieveImageResult {
            cache.clearMemoryCache()
            return try await get(name, options)
        }

        func stop() async throws {
            await manager.shutdown()
            try await downloader.shutdown()
            await origin.stop()
            folder.cleanUp()
        }
    }

    /// Runs `body` with a started fixture and always stops it, also when an expectation throws.
    func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let fixture = try await Fixture.start()
        do {
            try await body(fixture)
        } catch {
            try? await fixture.stop()
            throw error
        }
        try await fixture.stop()
    }

    // MARK: Freshness lifetime and age

    @Test func maxAgeServesFreshThenRevalidatesOnceStale() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=100"])
            #expect(try await f.get("a.png").served == .downloaded)
            f.clock.advance(50)
            let fresh = try await f.getFromDisk("a.png")
            #expect(fresh.served == .fresh && fresh.cacheType == .disk && f.requests("a.png") == 1)
            f.clock.advance(60)
            let stale = try await f.getFromDisk("a.png")
            #expect(stale.served == .revalidated && stale.revalidated && f.requests("a.png") == 2)
        }
    }

    @Test func maxAgeBeatsExpires() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=100", "Expires": imfFixdate(Date().addingTimeInterval(10_000))])
            _ = try await f.get("a.png")
            f.clock.advance(200)
            #expect(try await f.get("a.png").served == .revalidated)
            #expect(f.requests("a.png") == 2)
        }
    }

    @Test func expiresMinusDateIsTheLifetimeWithoutMaxAge() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Expires": imfFixdate(Date().addingTimeInterval(300))])
            _ = try await f.get("a.png")
            f.clock.advance(100)
            #expect(try await f.get("a.png").served == .fresh)
            f.clock.advance(300)
            #expect(try await f.get("a.png").served == .revalidated)
            #expect(f.requests("a.png") == 2)
        }
    }

    @Test func anInvalidExpiresMeansAlreadyStale() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Expires": "0"])
            _ = try await f.get("a.png")
            #expect(try await f.get("a.png").served == .revalidated)
        }
    }

    @Test func ageHeaderShortensFreshness() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=100", "Age": "80"])
            _ = try await f.get("a.png")
            f.clock.advance(30)
            // 80 s old on arrival + 30 s here > 100 s: stale, although the entry itself is 30 s old.
            #expect(try await f.get("a.png").served == .revalidated)
            #expect(f.requests("a.png") == 2)
        }
    }

    @Test func lastModifiedGivesATenthOfItsAgeAsHeuristicLifetime() async throws {
        try await withFixture { (f: Fixture) async throws in
            // Modified 2 days ago: fresh for about 4.8 hours.
            f.serve("a.png", [:], lastModified: imfFixdate(Date().addingTimeInterval(-2 * 86_400)))
            _ = try await f.get("a.png")
            f.clock.advance(4 * 3600)
            #expect(try await f.get("a.png").served == .fresh)
            f.clock.advance(3600)
            #expect(try await f.get("a.png").served == .revalidated)
        }
    }

    @Test func heuristicLifetimeIsCappedAtOneDay() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", [:], lastModified: imfFixdate(Date().addingTimeInterval(-100 * 86_400)))
            _ = try await f.get("a.png")
            f.clock.advance(86_400 - 600)
            #expect(try await f.get("a.png").served == .fresh)
            f.clock.advance(1200)
            #expect(try await f.get("a.png").served == .revalidated)
        }
    }

    @Test func noFreshnessInformationMeansRevalidateEveryTime() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", [:])
            _ = try await f.get("a.png")
            #expect(try await f.get("a.png").served == .revalidated)
            #expect(f.requests("a.png") == 2)
        }
    }

    // MARK: Directives

    @Test func noStoreIsWrittenToNoLayer() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "no-store, max-age=1000"])
            let first = try await f.get("a.png")
            #expect(first.served == .downloaded && first.image.width == 64)
            #expect(f.cache.memoryCache.containsImage(forKey: f.url("a.png").absoluteString) == false)
            #expect(await f.cache.isCached(forKey: f.url("a.png").absoluteString) == false)
            #expect(try await f.get("a.png").served == .downloaded)
            #expect(f.requests("a.png") == 2)
        }
    }

    @Test func noStoreAnswerToARevalidationRemovesTheStaleEntry() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=10"])
            _ = try await f.get("a.png")
            f.clock.advance(20)
            f.serve("a.png", ["Cache-Control": "no-store"], bytes: OriginFixture.jpeg)
            #expect(try await f.get("a.png").served == .downloaded)
            #expect(await f.cache.isCached(forKey: f.url("a.png").absoluteString) == false)
        }
    }

    @Test func noCacheIsStoredButRevalidatedBeforeEveryUse() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "no-cache, max-age=1000"])
            _ = try await f.get("a.png")
            #expect(await f.cache.isCached(forKey: f.url("a.png").absoluteString))
            #expect(try await f.get("a.png").served == .revalidated)
            #expect(try await f.get("a.png").served == .revalidated)
            #expect(f.requests("a.png") == 3)
        }
    }

    @Test func mustRevalidateNeverServesStaleEvenWithStaleIfError() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=10, must-revalidate, stale-if-error=1000"])
            _ = try await f.get("a.png")
            f.clock.advance(20)
            f.serve("a.png", [:], failure: 503)
            await #expect(throws: MagpieError.self) { try await f.get("a.png") }
        }
    }

    @Test func immutableSkipsRevalidationWhileFreshEvenWhenAsked() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=1000, immutable"])
            _ = try await f.get("a.png")
            #expect(try await f.get("a.png", [.revalidate]).served == .fresh)
            #expect(f.requests("a.png") == 1)
            f.clock.advance(2000)
            #expect(try await f.get("a.png", [.revalidate]).served == .revalidated)
        }
    }

    @Test func revalidateOptionAsksEvenWhileFreshWithoutImmutable() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=1000"])
            _ = try await f.get("a.png")
            #expect(try await f.get("a.png", [.revalidate]).served == .revalidated)
            #expect(f.requests("a.png") == 2)
        }
    }

    // MARK: Serving stale

    @Test func staleIfErrorServesTheStaleEntryWhenTheOriginAnswers503() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=10, stale-if-error=100"])
            _ = try await f.get("a.png")
            f.clock.advance(20)
            f.serve("a.png", [:], failure: 503)
            let stale = try await f.get("a.png")
            #expect(stale.served == .stale(.revalidationFailed) && stale.image.width == 64)
            f.clock.advance(200)
            // Past the window: the error.
            await #expect(throws: MagpieError.self) { try await f.get("a.png") }
        }
    }

    @Test func withoutStaleIfErrorA503IsAnError() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=10"])
            _ = try await f.get("a.png")
            f.clock.advance(20)
            f.serve("a.png", [:], failure: 503)
            await #expect(throws: MagpieError.self) { try await f.get("a.png") }
        }
    }

    @Test func staleIfErrorServesTheStaleEntryWhenTheConnectionIsRefused() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=10, stale-if-error=100"])
            _ = try await f.get("a.png")
            f.clock.advance(20)
            await f.origin.stop()
            #expect(try await f.get("a.png").served == .stale(.revalidationFailed))
        }
    }

    @Test func staleWhileRevalidateAnswersBeforeTheOriginAndRevalidatesOnce() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=10, stale-while-revalidate=100"])
            _ = try await f.get("a.png")
            f.clock.advance(20)
            // The origin now has new bytes and holds its answers until released.
            f.serve("a.png", ["Cache-Control": "max-age=1000"], bytes: OriginFixture.jpeg)
            f.origin.hold("a.png")
            let first = try await f.get("a.png")
            #expect(first.served == .stale(.whileRevalidating) && first.image.width == 64)
            try await waitUntil { f.origin.heldRequests == 1 }
            // The revalidation is still waiting for the origin: this caller is served stale at once too, and
            // does not start another one.
            #expect(try await f.get("a.png").served == .stale(.whileRevalidating))
            #expect(f.manager.statistics.backgroundRevalidations == 1)
            #expect(f.requests("a.png") == 2)
            f.origin.release("a.png")
            await f.manager.shutdown()
            let next = try await f.get("a.png")
            #expect(next.served == .fresh && next.image.width == 80)
            #expect(f.requests("a.png") == 2)
        }
    }

    @Test func staleWhileRevalidateDoesNotCoverPastItsWindow() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=10, stale-while-revalidate=100"])
            _ = try await f.get("a.png")
            f.clock.advance(200)
            #expect(try await f.get("a.png").served == .revalidated)
            #expect(f.manager.statistics.backgroundRevalidations == 0)
        }
    }

    // MARK: Validation

    @Test func a304UpdatesTheStoredFreshness() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=10"])
            _ = try await f.get("a.png")
            f.clock.advance(20)
            f.serve("a.png", ["Cache-Control": "max-age=1000"])
            #expect(try await f.getFromDisk("a.png").served == .revalidated)
            f.clock.advance(500)
            // Fresh by the 304's max-age, counted from the 304.
            #expect(try await f.getFromDisk("a.png").served == .fresh)
            #expect(f.requests("a.png") == 2)
        }
    }

    @Test func a200ToAConditionalRequestReplacesTheEntry() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=10"])
            _ = try await f.get("a.png")
            f.clock.advance(20)
            f.serve("a.png", ["Cache-Control": "max-age=1000"], bytes: OriginFixture.jpeg)
            let replaced = try await f.get("a.png")
            #expect(replaced.served == .downloaded && replaced.image.width == 80)
            let next = try await f.getFromDisk("a.png")
            #expect(next.served == .fresh && next.image.width == 80)
        }
    }

    @Test func noStoreWithValidatorsIsStillNeverStored() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "no-store"], lastModified: imfFixdate(Date().addingTimeInterval(-86_400)))
            _ = try await f.get("a.png")
            _ = try await f.get("a.png")
            #expect(f.origin.lastRequestHeaders(path: "/img/a.png")["if-none-match"] == nil)
            #expect(f.requests("a.png") == 2)
        }
    }

    // MARK: Vary

    @Test func varyAcceptKeepsOneEntryPerAcceptValue() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=1000", "Vary": "Accept"])
            let avif: [MagpieOption] = [.requestModifier(AnyModifier { var r = $0; r.setValue("image/avif", forHeader: "Accept"); return r })]
            let webp: [MagpieOption] = [.requestModifier(AnyModifier { var r = $0; r.setValue("image/webp", forHeader: "Accept"); return r })]
            #expect(try await f.get("a.png", avif).served == .downloaded)
            #expect(try await f.get("a.png", webp).served == .downloaded)
            #expect(f.requests("a.png") == 2)
            #expect(try await f.getFromDisk("a.png", avif).served == .fresh)
            #expect(try await f.getFromDisk("a.png", webp).served == .fresh)
            #expect(try await f.get("a.png", webp).served == .fresh)
            #expect(f.requests("a.png") == 2)
        }
    }

    @Test func varyStarNeverMatches() async throws {
        try await withFixture { (f: Fixture) async throws in
            f.serve("a.png", ["Cache-Control": "max-age=1000", "Vary": "*"])
            _ = try await f.get("a.png")
            #expect(try await f.get("a.png").served == .downloaded)
            #expect(f.requests("a.png") == 2)
        }
    }
}
