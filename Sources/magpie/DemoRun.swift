import Foundation
import Magpie
import MagpieOrigin

/// The demo's steps against a running origin: prefetch, a burst of identical requests, memory hits,
/// disk hits from a second manager (a new process), revalidation, and the thumbnails written out.
struct DemoRun: Sendable {
    let origin: ImageOrigin
    let samples: [DemoSample]
    let cacheRoot: URL
    let processor: any ImageProcessor
    let concurrency: Int
    let style: TextStyle
    let ledger = DemoLedger()
    let downloader: ImageDownloader
    /// Prints a step's line (nothing with `--json`).
    let say: @Sendable (String) -> Void

    init(origin: ImageOrigin, samples: [DemoSample], cacheRoot: URL, processor: any ImageProcessor, concurrency: Int,
         style: TextStyle, say: @escaping @Sendable (String) -> Void) {
        self.origin = origin
        self.samples = samples
        self.cacheRoot = cacheRoot
        self.processor = processor
        self.concurrency = concurrency
        self.style = style
        self.say = say
        downloader = ImageDownloader(name: "demo", configuration: .init())
    }

    /// A manager over the demo's cache folder; a second one sees only what the first wrote to disk.
    func makeManager() -> ImageManager {
        let cache = ImageCache(name: "demo", diskConfig: DiskStorage.Config(name: "demo", directory: cacheRoot))
        let manager = ImageManager(downloader: downloader, cache: cache)
        manager.defaultOptions = [.processor(processor), .waitForCache]
        return manager
    }

    func url(_ sample: DemoSample) -> URL { URL(string: origin.url(sample.path))! }

    /// The samples of the main set (all but the burst's poster).
    var mainSet: [DemoSample] { samples.filter { $0.name != "poster.jpg" } }

    // MARK: Steps

    /// Step 1: every sample plus two repeats of the first through an `ImagePrefetcher`, with a progress bar.
    func prefetch(manager: ImageManager) async -> PrefetchSummary {
        let list = mainSet + [mainSet[0], mainSet[0]]
        let byURL = Dictionary(list.map { (url($0).absoluteString, $0.name) }, uniquingKeysWith: { first, _ in first })
        let prefetcher = ImagePrefetcher(urls: list.map(url), manager: manager)
        prefetcher.maxConcurrentDownloads = concurrency
        let bar = ProgressBar(total: list.count, title: "prefetch", style: style)
        let outcomes = prefetcher.outcomes
        prefetcher.start()
        for await outcome in outcomes {
            let name = byURL[outcome.source.url?.absoluteString ?? ""] ?? "?"
            switch outcome {
            case .completed(_, let result):
                bar.record(.completed)
                ledger.add(DemoRecord(
                    phase: .prefetch, name: name,
                    outcome: .image(cacheType: result.cacheType, revalidated: result.revalidated, decodedBytes: result.image.cost),
                    ms: result.downloadMetrics.map { Units.ms($0.total) }))
            case .skipped(_, let cacheType):
                bar.record(.skipped)
                ledger.add(DemoRecord(phase: .prefetch, name: name, outcome: .skipped(cacheType), ms: nil))
            case .failed(_, let error):
                bar.record(.failed)
                ledger.add(DemoRecord(phase: .prefetch, name: name, outcome: .failed(error), ms: nil))
            }
        }
        bar.finish()
        return prefetcher.summary
    }

    /// Step 2: `callers` identical requests for one new image at once, then three different
    /// processors over another: one download each, one processing run for the identical ones.
    func burst(manager: ImageManager, callers: Int) async {
        let poster = samples.first { $0.name == "poster.jpg" }!
        await retrieve(Array(repeating: poster, count: callers), manager: manager, phase: .burst, concurrently: true)
        let variants: [any ImageProcessor] = [
            ResizingImageProcessor(referenceSize: PixelSize(width: 64, height: 64), mode: .aspectFit),
            ResizingImageProcessor(referenceSize: PixelSize(width: 128, height: 128), mode: .aspectFill),
            BlackWhiteProcessor(),
        ]
        // Paced by the origin (DemoSamples.pacedQuery), so the three arrive while the download runs.
        let wide = url(samples.first { $0.name == "wide.jpg" }!)
        await withTaskGroup(of: Void.self) { group in
            for variant in variants {
                group.addTask {
                    // Not in the ledger: these variants only show that different processors share a download.
                    _ = try? await manager.retrieveImage(with: wide, options: [.processor(variant), .forceRefresh])
                }
            }
        }
    }

    /// Retrieves `list` through `manager`, timing each and recording it under `phase`: one after
    /// another (so each time is the lookup's own), or all at once when they wait on the network.
    func retrieve(
        _ list: [DemoSample], manager: ImageManager, phase: DemoPhase, options: [MagpieOption] = [], concurrently: Bool = false
    ) async {
        guard concurrently else {
            for sample in list { await retrieve(sample, manager: manager, phase: phase, options: options) }
            return
        }
        await withTaskGroup(of: Void.self) { group in
            for sample in list {
                group.addTask { await retrieve(sample, manager: manager, phase: phase, options: options) }
            }
        }
    }

    private func retrieve(_ sample: DemoSample, manager: ImageManager, phase: DemoPhase, options: [MagpieOption]) async {
        let started = ContinuousClock.now
        let outcome: DemoRecord.Outcome
        do {
            let result = try await manager.retrieveImage(with: url(sample), options: options)
            outcome = .image(cacheType: result.cacheType, revalidated: result.revalidated, decodedBytes: result.image.cost)
        } catch {
            outcome = .failed(error as? MagpieError ?? .requestFailed(reason: .cancelled(url(sample))))
        }
        ledger.add(DemoRecord(phase: phase, name: sample.name, outcome: outcome, ms: Units.ms(ContinuousClock.now - started)))
    }

    /// Step 6: each sample's processed image from `manager`'s memory, encoded as the cache stores
    /// it, into `folder`; returns the files written.
    func writeThumbnails(manager: ImageManager, to folder: URL) async throws -> [String] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var written: [String] = []
        for sample in samples where !sample.isCorrupt {
            guard let result = try? await manager.retrieveImage(with: url(sample), options: [.onlyFromCache]) else { continue }
            let data = try DefaultCacheSerializer.default.data(with: result.image, original: nil)
            let base = URL(fileURLWithPath: sample.name).deletingPathExtension().lastPathComponent
            let name = base + "." + data.mg.imageFormat.fileExtension
            try data.write(to: folder.appendingPathComponent(name), options: .atomic)
            written.append(name)
        }
        return written
    }

    /// How the records of `phase` ended: counts by cache layer and failures.
    func tally(_ phase: DemoPhase) -> DemoTally {
        var tally = DemoTally()
        for record in ledger.all where record.phase == phase {
            switch record.outcome {
            case .image(let cacheType, let revalidated, _):
                if revalidated { tally.revalidated += 1 }
                switch cacheType {
                case .memory: tally.memory += 1
                case .disk: tally.disk += 1
                case .none: tally.network += 1
                }
            case .skipped: tally.skipped += 1
            case .failed: tally.failed += 1
            }
        }
        return tally
    }
}

/// How the retrievals of one demo step ended.
struct DemoTally {
    var memory = 0, disk = 0, network = 0, revalidated = 0, skipped = 0, failed = 0

    /// `9 from memory, 1 failed`: the non-zero counts in words.
    var summary: String {
        var parts: [String] = []
        if memory > 0 { parts.append("\(memory) from memory") }
        if disk > 0 { parts.append("\(disk) from disk") }
        if network > 0 { parts.append("\(network) downloaded") }
        if revalidated > 0 { parts.append("\(revalidated) confirmed by 304") }
        if failed > 0 { parts.append("\(failed) failed") }
        return parts.joined(separator: ", ")
    }
}
