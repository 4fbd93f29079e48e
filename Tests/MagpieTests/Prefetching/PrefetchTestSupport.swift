import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

/// The prefetcher tests' origin, recorders and probes.
extension ImagePrefetcherTests {
    /// A local origin serving `count` distinct gradient PNGs (`a0.png`, `a1.png`, …), a disk cache in
    /// a temporary folder and a downloader, per test.
    struct Fixture {
        let origin: ImageOrigin
        let folder: TemporaryFolder
        let downloader = ImageDownloader(name: "prefetch")
        let names: [String]

        static func start(count: Int = 6) async throws -> Fixture {
            let names = (0..<count).map { "a\($0).png" }
            var extra: [String: OriginAsset] = [:]
            for (index, name) in names.enumerated() {
                let bytes = try png(index)
                extra[name] = OriginAsset(bytes: [UInt8](bytes), contentType: "image/png")
            }
            return Fixture(origin: try await OriginFixture.start(extra: extra), folder: try TemporaryFolder(), names: names)
        }

        /// Asset `index`: a gradient `(8 + index)×6`, so every asset has its own size.
        static func gradient(_ index: Int) throws -> PixelBuffer { try TestImages.gradient(width: 8 + index, height: 6) }

        static func png(_ index: Int) throws -> Data { try ImageCoderRegistry.shared.encode(Image(pixels: gradient(index)), as: .png) }

        /// A cache over the fixture's folder; every one made sees the others' disk entries.
        func cache() -> ImageCache {
            ImageCache(name: "prefetch", diskConfig: DiskStorage.Config(name: "prefetch", directory: folder.url))
        }

        func manager() -> ImageManager { ImageManager(downloader: downloader, cache: cache()) }

        func url(_ path: String) -> URL { URL(string: origin.url(path))! }

        var imageURLs: [URL] { names.map { url("/img/\($0)") } }

        /// The assets sent in 4 pieces 60 ms apart: each download keeps a stream open at the origin for ≥ 180 ms.
        var slowURLs: [URL] {
            names.enumerated().map { index, name in
                let chunk = (try! Self.png(index)).count / 4 + 1
                return url("/slow/\(name)?chunk=\(chunk)&delay=60")
            }
        }

        func stop() async throws {
            try await downloader.shutdown()
            await origin.stop()
            folder.cleanUp()
        }
    }

    /// Records the prefetcher's callbacks.
    final class CallRecorder: Sendable {
        private struct Calls {
            var progress: [(skipped: Int, failed: Int, completed: Int)] = []
            var completions: [PrefetchSummary] = []
            var notes: [String] = []
        }

        private let calls = Mutex(Calls())

        var progressCalls: [(skipped: Int, failed: Int, completed: Int)] { calls.withLock { $0.progress } }
        var completions: [PrefetchSummary] { calls.withLock { $0.completions } }
        /// Whatever a test's own callback wanted to flag.
        var notes: [String] { calls.withLock { $0.notes } }

        func note(_ text: String) { calls.withLock { $0.notes.append(text) } }

        var progress: PrefetcherProgressBlock {
            { skipped, failed, completed in
                self.calls.withLock { $0.progress.append((skipped.count, failed.count, completed.count)) }
            }
        }

        var complete: PrefetcherCompletionHandler {
            { skipped, failed, completed in
                self.calls.withLock { $0.completions.append(PrefetchSummary(skipped: skipped, failed: failed, completed: completed)) }
            }
        }
    }

    /// Counts the provider retrievals running at once.
    final class ConcurrencyProbe: Sendable {
        let target: Int
        private let counts = Mutex((current: 0, max: 0, calls: 0))

        init(target: Int) { self.target = target }

        var maxSeen: Int { counts.withLock { $0.max } }
        var calls: Int { counts.withLock { $0.calls } }

        func enter() {
            counts.withLock {
                $0.current += 1
                $0.calls += 1
                $0.max = max($0.max, $0.current)
            }
        }

        func leave() { counts.withLock { $0.current -= 1 } }
    }

    /// Serves a PNG through a probe. Each call holds its slot until the probe has seen `target`
    /// calls at once (or 5 s passed), so reaching the limit does not depend on timing, and for at
    /// least 30 ms, so a call beyond the limit would overlap the others.
    struct ProbedProvider: ImageDataProvider {
        let cacheKey: String
        let bytes: Data
        let probe: ConcurrencyProbe

        func data() async throws -> Data {
            probe.enter()
            defer { probe.leave() }
            let entered = ContinuousClock.now
            while probe.maxSeen < probe.target || ContinuousClock.now < entered + .milliseconds(30),
                ContinuousClock.now < entered + .seconds(5)
            {
                try await Task.sleep(for: .milliseconds(2))
            }
            return bytes
        }
    }

    /// Stores the bytes that came in, 50 ms late: a disk write that is not awaited is still running
    /// when the retrieval returns.
    struct SlowSerializer: CacheSerializer {
        func data(with image: Image, original: Data?) throws -> Data {
            Thread.sleep(forTimeInterval: 0.05)
            return try ImageManager.originalBytes.data(with: image, original: original)
        }

        func image(with data: Data, options: ImageDecodingOptions) throws -> Image {
            try ImageManager.originalBytes.image(with: data, options: options)
        }

        var originalDataUsed: Bool { ImageManager.originalBytes.originalDataUsed }
    }

    /// Polls `condition` every 5 ms for up to `seconds`.
    func pollUntil(seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    /// Collects a stream until it finishes.
    func collect(_ stream: AsyncStream<PrefetchOutcome>) -> Task<[PrefetchOutcome], Never> {
        Task {
            var outcomes: [PrefetchOutcome] = []
            for await outcome in stream { outcomes.append(outcome) }
            return outcomes
        }
    }

    func keys(_ sources: [Source]) -> Set<String> { Set(sources.map(\.cacheKey)) }
}
