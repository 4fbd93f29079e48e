import Foundation
import MagpieOrigin
import Testing

@testable import Magpie
@testable import MagpieCore

@Suite("ImagePrefetcher: skip cached, download the rest, bounded concurrency")
struct ImagePrefetcherTests {
    @Test func prefetchDownloadsEveryURLIntoTheDiskCacheAndCompletesOnce() async throws {
        let fixture = try await Fixture.start()
        let recorder = CallRecorder()
        let cache = fixture.cache()
        let urls = fixture.imageURLs
        // `waitForCache`: a source counts as completed only once it is on disk.
        let progress = recorder.progress
        let prefetcher = ImagePrefetcher(
            urls: urls, options: [.cacheSerializer(SlowSerializer())], manager: ImageManager(downloader: fixture.downloader, cache: cache),
            progressBlock: { skipped, failed, completed in
                progress(skipped, failed, completed)
                for source in completed where cache.diskStorage?.isCached(forKey: source.cacheKey) != true {
                    recorder.note("not on disk: \(source.cacheKey)")
                }
            },
            completionHandler: recorder.complete)
        let summary = await prefetcher.run()

        #expect(keys(summary.completed) == Set(urls.map(\.absoluteString)))
        #expect(summary.skipped.isEmpty && summary.failed.isEmpty)
        #expect(prefetcher.isFinished)
        #expect(fixture.origin.totalRequests == urls.count)
        #expect(fixture.names.allSatisfy { fixture.origin.requestCount(path: "/img/\($0)") == 1 })
        #expect(recorder.notes.isEmpty)
        #expect(recorder.completions.count == 1)
        #expect(recorder.completions.first?.completed.count == urls.count)
        #expect(recorder.progressCalls.map(\.completed) == Array(1...urls.count))

        let fresh = ImageManager(downloader: fixture.downloader, cache: fixture.cache())
        for (index, url) in urls.enumerated() {
            let cached = try await fresh.retrieveImage(with: url, options: [.onlyFromCache])
            #expect(cached.cacheType == .disk)
            #expect(cached.image.pixels == (try Fixture.gradient(index)))
        }
        try await fixture.stop()
    }

    @Test func cachedURLsAreSkippedWithoutAnyRequest() async throws {
        let fixture = try await Fixture.start()
        let urls = fixture.imageURLs
        let manager = fixture.manager()
        _ = await ImagePrefetcher(urls: urls, manager: manager).run()
        #expect(fixture.origin.totalRequests == urls.count)

        // A new manager over the same folder finds them on disk; the first one still has them in memory.
        for (manager, layer) in [(fixture.manager(), CacheType.disk), (manager, .memory)] {
            let prefetcher = ImagePrefetcher(urls: urls, manager: manager)
            let outcomes = collect(prefetcher.outcomes)
            let summary = await prefetcher.run()
            #expect(keys(summary.skipped) == Set(urls.map(\.absoluteString)))
            #expect(summary.completed.isEmpty && summary.failed.isEmpty)
            let layers = await outcomes.value.map { outcome -> CacheType? in
                if case .skipped(_, let type) = outcome { type } else { nil }
            }
            #expect(layers == Array(repeating: layer, count: urls.count))
        }
        #expect(fixture.origin.totalRequests == urls.count)
        try await fixture.stop()
    }

    @Test func forceRefreshDownloadsCachedURLsAgain() async throws {
        let fixture = try await Fixture.start()
        let urls = fixture.imageURLs
        let manager = fixture.manager()
        _ = await ImagePrefetcher(urls: urls, manager: manager).run()
        let summary = await ImagePrefetcher(urls: urls, options: [.forceRefresh], manager: manager).run()
        #expect(keys(summary.completed) == Set(urls.map(\.absoluteString)))
        #expect(summary.skipped.isEmpty)
        #expect(fixture.origin.totalRequests == 2 * urls.count)
        #expect(fixture.names.allSatisfy { fixture.origin.requestCount(path: "/img/\($0)") == 2 })
        try await fixture.stop()
    }

    @Test func failuresLandInFailedWithTheirReasonsWhileTheOthersComplete() async throws {
        let fixture = try await Fixture.start(count: 2)
        let missing = fixture.url("/status/404"), corrupt = fixture.url("/img/corrupt.png"), fake = fixture.url("/img/fake.png")
        let urls = [fixture.imageURLs[0], missing, corrupt, fixture.imageURLs[1], fake]
        let recorder = CallRecorder()
        let prefetcher = ImagePrefetcher(urls: urls, manager: fixture.manager(), completionHandler: recorder.complete)
        let stream = collect(prefetcher.outcomes)
        let summary = await prefetcher.run()

        #expect(keys(summary.completed) == Set(fixture.imageURLs.map(\.absoluteString)))
        #expect(keys(summary.failed) == Set([missing, corrupt, fake].map(\.absoluteString)))
        #expect(recorder.completions.map(\.failed.count) == [3])
        var errors: [String: MagpieError] = [:]
        for case .failed(let source, let error) in await stream.value { errors[source.cacheKey] = error }
        #expect(errors[missing.absoluteString]?.statusCode == 404)
        #expect(errors[corrupt.absoluteString].map { if case .responseFailed(.undecodable) = $0 { true } else { false } } == true)
        #expect(errors[fake.absoluteString].map { if case .responseFailed(.notAnImage(_, .unknown)) = $0 { true } else { false } } == true)
        try await fixture.stop()
    }

    @Test func maxConcurrentDownloadsBoundsTheRequestsInFlightAtTheOrigin() async throws {
        let fixture = try await Fixture.start(count: 6)
        let prefetcher = ImagePrefetcher(urls: fixture.slowURLs, manager: fixture.manager())
        prefetcher.maxConcurrentDownloads = 2
        let origin = fixture.origin
        let sampler = Task {
            var highest = 0
            while !Task.isCancelled {
                highest = max(highest, origin.activeStreams)
                try? await Task.sleep(for: .milliseconds(2))
            }
            return highest
        }
        let summary = await prefetcher.run()
        sampler.cancel()
        #expect(summary.completed.count == 6)
        #expect(await sampler.value == 2)
        #expect(fixture.names.allSatisfy { origin.requestCount(path: "/slow/\($0)") == 1 })
        try await fixture.stop()
    }
}

extension ImagePrefetcherTests {
    @Test func stopMidwayFailsTheUnfinishedSourcesCompletesOnceAndCannotRestart() async throws {
        let fixture = try await Fixture.start(count: 8)
        let recorder = CallRecorder()
        let urls = fixture.slowURLs
        let manager = fixture.manager()
        let prefetcher = ImagePrefetcher(
            urls: urls, manager: manager, progressBlock: recorder.progress, completionHandler: recorder.complete)
        prefetcher.maxConcurrentDownloads = 2
        let stream = collect(prefetcher.outcomes)
        prefetcher.start()
        #expect(await pollUntil { !prefetcher.summary.completed.isEmpty })
        prefetcher.stop()

        #expect(prefetcher.isFinished)
        #expect(await pollUntil { !recorder.completions.isEmpty })
        let summary = prefetcher.summary
        #expect(summary.finishedCount == urls.count)
        #expect(summary.skipped.isEmpty)
        #expect(keys(summary.completed).isDisjoint(with: keys(summary.failed)))
        let unrequested = fixture.names.indices.filter { fixture.origin.requestCount(path: "/slow/\(fixture.names[$0])") == 0 }
        #expect(unrequested.count >= 3)
        #expect(Set(unrequested.map { urls[$0].absoluteString }).isSubset(of: keys(summary.failed)))
        #expect(recorder.completions.map { [$0.completed.count, $0.failed.count] } == [[summary.completed.count, summary.failed.count]])
        // The stopped sources get failed outcomes (cancellations) but no progress calls.
        let outcomes = await stream.value
        #expect(outcomes.count == urls.count)
        let cancelled = outcomes.filter { if case .failed(_, let error) = $0 { error.isCancellation } else { false } }
        #expect(cancelled.count == summary.failed.count)
        #expect(recorder.progressCalls.count == summary.completed.count)
        #expect(await pollUntil { fixture.origin.activeStreams == 0 })
        // A request the client was already sending when stop() cancelled it can still reach the
        // origin afterwards on a loaded machine: let the count settle before taking it.
        var settled = fixture.origin.totalRequests
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(100))
            let now = fixture.origin.totalRequests
            if now == settled { break }
            settled = now
        }

        let requests = fixture.origin.totalRequests
        prefetcher.start()
        prefetcher.stop()
        #expect(await prefetcher.run().finishedCount == urls.count)
        try await Task.sleep(for: .milliseconds(100))
        #expect(fixture.origin.totalRequests == requests)
        #expect(prefetcher.summary.completed.count == summary.completed.count)
        #expect(recorder.completions.count == 1)

        // Stopping is not a failure of the URLs: a new prefetcher fetches the rest. A source whose
        // disk write was under way when stop() came is reported failed yet cached (at most one per worker).
        let again = await ImagePrefetcher(urls: urls, manager: manager).run()
        let cachedAfterStop = keys(again.skipped).subtracting(keys(summary.completed))
        #expect(keys(summary.completed).isSubset(of: keys(again.skipped)))
        #expect(cachedAfterStop.isSubset(of: keys(summary.failed)))
        #expect(cachedAfterStop.count <= 2)
        #expect(keys(again.completed) == keys(summary.failed).subtracting(cachedAfterStop))
        #expect(again.failed.isEmpty)
        try await fixture.stop()
    }

    @Test func stopBeforeStartFailsEverySourceAndCompletes() async throws {
        let fixture = try await Fixture.start(count: 3)
        let recorder = CallRecorder()
        let prefetcher = ImagePrefetcher(urls: fixture.imageURLs, manager: fixture.manager(), completionHandler: recorder.complete)
        prefetcher.stop()
        prefetcher.start()
        #expect(prefetcher.isFinished)
        #expect(recorder.completions.map(\.failed.count) == [3])
        #expect(keys(prefetcher.summary.failed) == Set(fixture.imageURLs.map(\.absoluteString)))
        #expect(prefetcher.summary.elapsed == .zero)
        try await Task.sleep(for: .milliseconds(100))
        #expect(fixture.origin.totalRequests == 0)
        try await fixture.stop()
    }

    @Test func cancellingTheTaskAwaitingRunStopsThePrefetcher() async throws {
        let fixture = try await Fixture.start(count: 4)
        let recorder = CallRecorder()
        let prefetcher = ImagePrefetcher(urls: fixture.slowURLs, manager: fixture.manager(), completionHandler: recorder.complete)
        prefetcher.maxConcurrentDownloads = 1
        let runner = Task { await prefetcher.run() }
        #expect(await pollUntil { fixture.origin.activeStreams == 1 })
        runner.cancel()
        let summary = await runner.value
        #expect(prefetcher.isFinished)
        #expect(recorder.completions.count == 1)
        #expect(summary.finishedCount == 4)
        #expect(summary.failed.count >= 3)
        #expect(await pollUntil { fixture.origin.activeStreams == 0 })
        try await fixture.stop()
    }
}

extension ImagePrefetcherTests {
    @Test func outcomesStreamYieldsOneOutcomePerSourceThenFinishes() async throws {
        let fixture = try await Fixture.start(count: 2)
        let cache = fixture.cache()
        let manager = ImageManager(downloader: fixture.downloader, cache: cache)
        let stored = ImageResource(downloadURL: fixture.url("/img/unused.png"), cacheKey: "pre-stored")
        await cache.store(Image(pixels: try TestImages.gradient(width: 5, height: 5)), forKey: "pre-stored", toDisk: false)
        let dataURL = URL(string: "data:image/png;base64,\(try Fixture.png(3).base64EncodedString())")!
        let resources: [any Resource] = [
            fixture.imageURLs[0], stored, fixture.url("/img/missing.png"), dataURL,
            ImageResource(downloadURL: fixture.imageURLs[1], cacheKey: "custom"),
        ]
        let prefetcher = ImagePrefetcher(resources: resources, manager: manager)
        let first = collect(prefetcher.outcomes), second = collect(prefetcher.outcomes)
        _ = await prefetcher.run()

        let outcomes = await first.value
        #expect(outcomes.count == resources.count)
        #expect(outcomes.map(\.source.cacheKey).sorted() == (await second.value).map(\.source.cacheKey).sorted())
        var kinds: [String: String] = [:]
        var sizes: [String: PixelSize] = [:]
        for outcome in outcomes {
            switch outcome {
            case .completed(let source, let result):
                kinds[source.cacheKey] = "completed"
                sizes[source.cacheKey] = result.image.pixelSize
            case .skipped(let source, let type): kinds[source.cacheKey] = "skipped-\(type)"
            case .failed(let source, _): kinds[source.cacheKey] = "failed"
            }
        }
        let dataKey = dataURL.convertToSource().cacheKey
        #expect(kinds == [
            fixture.imageURLs[0].absoluteString: "completed", "pre-stored": "skipped-memory",
            fixture.url("/img/missing.png").absoluteString: "failed", dataKey: "completed", "custom": "completed",
        ])
        #expect(sizes == [
            fixture.imageURLs[0].absoluteString: PixelSize(width: 8, height: 6), dataKey: PixelSize(width: 11, height: 6),
            "custom": PixelSize(width: 9, height: 6),
        ])
        #expect(fixture.origin.totalRequests == 3)
        // After the end, a new stream is already finished.
        #expect(await collect(prefetcher.outcomes).value.isEmpty)
        try await fixture.stop()
    }

    @Test func tenThousandCachedSourcesAreSkippedAndRetrievalsStayWithinTheLimit() async throws {
        let fixture = try await Fixture.start(count: 2)
        let cache = ImageCache(name: "prefetch-memory", memoryStorage: MemoryStorage(), diskStorage: nil)
        let manager = ImageManager(downloader: fixture.downloader, cache: cache)
        let image = Image(pixels: try TestImages.gradient(width: 4, height: 4))
        let probe = ConcurrencyProbe(target: 3)
        let bytes = try Fixture.png(2)
        var sources: [Source] = (0..<6).map { .provider(ProbedProvider(cacheKey: "fresh-\($0)", bytes: bytes, probe: probe)) }
        for index in 0..<10_000 {
            cache.memoryCache.storeImage(image, forKey: "cached-\(index)", expiration: nil)
            sources.append(.provider(ProbedProvider(cacheKey: "cached-\(index)", bytes: bytes, probe: probe)))
        }
        sources.insert(.network(fixture.imageURLs[0]), at: 5_000)
        sources.append(.network(fixture.imageURLs[1]))
        let recorder = CallRecorder()
        let prefetcher = ImagePrefetcher(
            sources: sources, options: [.cacheMemoryOnly], manager: manager,
            progressBlock: recorder.progress, completionHandler: recorder.complete)
        prefetcher.maxConcurrentDownloads = 3
        let stream = collect(prefetcher.outcomes)
        let summary = await prefetcher.run()

        #expect(summary.skipped.count == 10_000)
        #expect(summary.completed.count == 8)
        #expect(summary.failed.isEmpty)
        #expect(probe.calls == 6)
        #expect(probe.maxSeen == 3)
        #expect(fixture.origin.totalRequests == 2)
        #expect(recorder.progressCalls.count == sources.count)
        #expect(recorder.progressCalls.last.map { [$0.skipped, $0.failed, $0.completed] } == [10_000, 0, 8])
        #expect(recorder.completions.count == 1)
        let skippedFromMemory = await stream.value.filter { if case .skipped(_, .memory) = $0 { true } else { false } }
        #expect(skippedFromMemory.count == 10_000)
        #expect(cache.memoryCache.image(forKey: "fresh-0", extendingExpiration: nil)?.pixels == (try Fixture.gradient(2)))
        try await fixture.stop()
    }

    @Test func emptyListCompletesAtOnceAndConcurrencyIsClampedAndFrozenAtStart() async throws {
        let recorder = CallRecorder()
        let folder = try TemporaryFolder()
        let manager = ImageManager(
            downloader: ImageDownloader(name: "prefetch-empty"),
            cache: ImageCache(name: "empty", diskConfig: DiskStorage.Config(name: "empty", directory: folder.url)))
        let prefetcher = ImagePrefetcher(sources: [], manager: manager, completionHandler: recorder.complete)
        #expect(prefetcher.maxConcurrentDownloads == 5)
        prefetcher.maxConcurrentDownloads = 0
        #expect(prefetcher.maxConcurrentDownloads == 1)
        prefetcher.start()
        prefetcher.maxConcurrentDownloads = 8
        #expect(prefetcher.maxConcurrentDownloads == 1)
        #expect(prefetcher.isFinished)
        #expect(recorder.completions.count == 1)
        #expect(await prefetcher.run().finishedCount == 0)
        try await manager.downloader?.shutdown()
        folder.cleanUp()
    }
}
