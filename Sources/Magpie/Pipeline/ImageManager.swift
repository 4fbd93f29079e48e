import MagpieCore
import Dispatch
import Logging
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Ties the caches, the downloader and the processors together:
/// memory → disk → original cache → (revalidate) → download → decode → process → store → result.
///
/// Concurrent requests for the same processed variant share one run of the miss path (one
/// download, one decode, one processing run); different processors over one URL share the
/// download. URLs that failed for good are refused at once until ``MagpieOption/retryFailed``
/// (see ``FailedURLList``).
public final class ImageManager: Sendable {
    /// Maps a URL to its cache key, for example to drop a signed URL's query string. Called on every
    /// retrieval of a plain URL, from any task: keep it fast and pure.
    public typealias CacheKeyFilter = @Sendable (URL) -> String

    /// The shared manager: ``ImageDownloader/default`` and ``ImageCache/default``, with its own failed-URL list.
    public static let shared = ImageManager(downloader: .default, cache: .default)

    /// Fetches the bytes of sources for this manager unless an option names another downloader.
    public let loader: any ImageDataLoading
    /// The loader when it is an ``ImageDownloader`` (statistics, shutdown); nil for another loader.
    public var downloader: ImageDownloader? { loader as? ImageDownloader }
    /// Caches for this manager unless an option names another cache.
    public let cache: ImageCache
    /// URLs that failed for good, refused until ``MagpieOption/retryFailed`` or removal.
    public let failedURLs: FailedURLList

    private struct Settings {
        private(set) var defaultOptions: [MagpieOption] = []
        /// `defaultOptions` parsed once: most calls pass no options of their own.
        private(set) var parsedDefaults = MagpieParsedOptions([])
        var cacheKeyFilter: CacheKeyFilter?

        init(cacheKeyFilter: CacheKeyFilter?) { self.cacheKeyFilter = cacheKeyFilter }

        mutating func setDefaultOptions(_ options: [MagpieOption]) {
            defaultOptions = options
            parsedDefaults = MagpieParsedOptions(options)
        }
    }

    private let settings: Mutex<Settings>
    /// The processed-variant stage: one run of the miss path per variant, however many callers want it.
    let variants = SharedWork<String, RetrieveImageResult>()
    let counters = ManagerCounters()
    let logger = Logger(label: "magpie.manager")

    /// Where decoding and processing run: at most its width at once, off the cooperative pool.
    public let processingExecutor: BoundedExecutor
    /// The most misses (load, decode, process, store) that run at once; the others wait their turn, highest
    /// priority first. Without it, downloads outrun processing and every miss holds its bytes until a processing
    /// slot frees: 1,000 concurrent misses of a 350 KB image once peaked at 335 MiB instead of ~110.
    public let maximumConcurrentMisses: Int
    /// Holds a slot per running miss.
    let missSlots: BoundedExecutor
    /// Caches other than ``cache`` that this manager wrote to (`.targetCache`, `.originalCache`): ``shutdown()``
    /// flushes them too.
    let otherCaches = Mutex<[ObjectIdentifier: ImageCache]>([:])
    /// `stale-while-revalidate` revalidations running, one per cache and variant.
    let revalidationsInFlight = Mutex<Set<String>>([])
    /// Work that outlives the call that started it (background revalidations): ``shutdown()`` waits for it.
    let backgroundWork = PendingWork()

    /// Unprocessed images are stored as the bytes that came in: re-encoding would lose quality,
    /// and the stored ETag describes exactly those bytes.
    static let originalBytes = DefaultCacheSerializer(preferCacheOriginalData: true)

    /// A manager over the given downloader and cache.
    ///
    /// - Parameters:
    ///   - downloader: Downloads for this manager unless ``MagpieOption/downloader(_:)`` names another.
    ///   - cache: Caches for this manager unless ``MagpieOption/targetCache(_:)`` names another.
    ///   - failedURLs: The failed-URL list (shared between managers when the same one is passed); a new,
    ///     empty list by default.
    ///   - cacheKeyFilter: Maps plain URLs to cache keys; nil (the default) keeps `absoluteString`.
    ///   - processingExecutor: Where decoding and processing run; ``BoundedExecutor/processing`` (one slot per
    ///     core, shared by every manager) by default.
    ///   - maximumConcurrentMisses: The most misses at once; nil (the default) for the downloader's
    ///     `maximumConcurrentDownloads` plus the processing executor's width.
    public convenience init(
        downloader: ImageDownloader, cache: ImageCache, failedURLs: FailedURLList = FailedURLList(),
        cacheKeyFilter: CacheKeyFilter? = nil, processingExecutor: BoundedExecutor = .processing,
        maximumConcurrentMisses: Int? = nil
    ) {
        self.init(
            loader: downloader, cache: cache, failedURLs: failedURLs, cacheKeyFilter: cacheKeyFilter,
            processingExecutor: processingExecutor,
            maximumConcurrentMisses: maximumConcurrentMisses
                ?? downloader.configuration.maximumConcurrentDownloads + processingExecutor.width)
    }

    /// A manager over any loader (the loader port) and cache.
    ///
    /// - Parameters:
    ///   - loader: Fetches the bytes of sources: an ``ImageDownloader``, a ``DataProviderLoader`` or your own.
    ///   - cache: Caches for this manager unless ``MagpieOption/targetCache(_:)`` names another.
    ///   - failedURLs: The failed-URL list; a new, empty list by default.
    ///   - cacheKeyFilter: Maps plain URLs to cache keys; nil (the default) keeps `absoluteString`.
    ///   - processingExecutor: Where decoding and processing run; ``BoundedExecutor/processing`` by default.
    ///   - maximumConcurrentMisses: The most misses at once (at least 1); nil (the default) for 16 plus the
    ///     processing executor's width.
    public init(
        loader: any ImageDataLoading, cache: ImageCache, failedURLs: FailedURLList = FailedURLList(),
        cacheKeyFilter: CacheKeyFilter? = nil, processingExecutor: BoundedExecutor = .processing,
        maximumConcurrentMisses: Int? = nil
    ) {
        self.loader = loader
        self.cache = cache
        self.failedURLs = failedURLs
        self.settings = Mutex(Settings(cacheKeyFilter: cacheKeyFilter))
        self.processingExecutor = processingExecutor
        self.maximumConcurrentMisses = max(1, maximumConcurrentMisses ?? 16 + processingExecutor.width)
        self.missSlots = BoundedExecutor(name: "magpie.manager.misses", width: self.maximumConcurrentMisses)
    }

    /// Options applied before every call's own options (which win where both set the same thing). Empty by default.
    public var defaultOptions: [MagpieOption] {
        get { settings.withLock { $0.defaultOptions } }
        set { settings.withLock { $0.setDefaultOptions(newValue) } }
    }

    /// Maps plain URLs (resources whose key is their URL) to cache keys; nil (the default): `absoluteString`.
    /// Resources that chose their own key keep it.
    public var cacheKeyFilter: CacheKeyFilter? {
        get { settings.withLock { $0.cacheKeyFilter } }
        set { settings.withLock { $0.cacheKeyFilter = newValue } }
    }

    /// The cache key of `source`, after the cache-key filter.
    ///
    /// - Parameter source: The source; only ``Source/network(_:)`` sources whose key is their URL's string are
    ///   filtered.
    /// - Returns: The key the unprocessed image is cached under.
    public func cacheKey(for source: Source) -> String {
        cacheKey(for: source, filter: cacheKeyFilter)
    }

    private func cacheKey(for source: Source, filter: CacheKeyFilter?) -> String {
        // Without a filter the key is the source's own, read without binding (copying) the resource first.
        guard let filter else { return source.cacheKey }
        guard case .network(let resource) = source else { return source.cacheKey }
        let key = resource.cacheKey
        guard key == resource.downloadURL.absoluteString else { return key }
        return filter(resource.downloadURL)
    }

    /// Waits until what this manager has retrieved is saved: every disk write it started in the background (to its
    /// ``cache`` and to any cache an option named) has finished and the caches are flushed. Call it before a process
    /// exits — a short job that returns right after a retrieval would otherwise lose the write and download again
    /// next time. The manager stays usable. The downloader is not shut down: it may be shared (call
    /// ``ImageDownloader/shutdown()`` on one you own).
    public func shutdown() async {
        // Background revalidations first: they may still write to the caches flushed below.
        await backgroundWork.waitUntilIdle()
        await cache.flush()
        for other in otherCaches.withLock({ Array($0.values) }) { await other.flush() }
    }

    /// Counts of what the manager did since it was created.
    public var statistics: Statistics { counters.snapshot(joined: variants.joinedCount) }

    /// `options` after the manager's `defaultOptions`, parsed.
    func parse(_ options: [MagpieOption]) -> MagpieParsedOptions {
        parseWithCacheKeyFilter(options).options
    }

    /// ``parse(_:)`` and ``cacheKeyFilter`` under one lock: a memory hit needs both.
    private func parseWithCacheKeyFilter(
        _ options: [MagpieOption]
    ) -> (options: MagpieParsedOptions, cacheKeyFilter: CacheKeyFilter?) {
        // Without options of the call's own, the parsed defaults are the answer and the list is not read.
        if options.isEmpty { return settings.withLock { ($0.parsedDefaults, $0.cacheKeyFilter) } }
        let (defaults, filter) = settings.withLock { ($0.defaultOptions, $0.cacheKeyFilter) }
        return (MagpieParsedOptions(defaults.isEmpty ? options : defaults + options), filter)
    }

    // MARK: Retrieving

    /// The image for `resource` (a URL works too): `file:` and `data:` URLs are read without HTTP.
    ///
    /// Same as ``retrieveImage(with:options:progressBlock:)-(Source,_,_)`` with `resource.convertToSource()`.
    /// - Parameters:
    ///   - resource: A ``Resource`` or a `URL`.
    ///   - options: Options for this call, applied after ``defaultOptions``; nil for none.
    ///   - progressBlock: Called with bytes received and expected (-1 when unknown); not called for cache hits.
    /// - Returns: The image, where it came from and, when downloaded, the bytes and metrics.
    /// - Throws: A ``MagpieError``, as ``retrieveImage(with:options:progressBlock:)-(Source,_,_)`` describes.
    public func retrieveImage(
        with resource: any Resource, options: [MagpieOption]? = nil, progressBlock: DownloadProgressBlock? = nil
    ) async throws -> RetrieveImageResult {
        let (source, key) = resource.convertToSourceAndKey()
        if let hit = plainMemoryHit(source, key: key, options: options ?? []) { return hit }
        return try await retrieveImageReporting(
            with: source, options: options ?? [], progress: DownloadProgress.handler(reportingTo: progressBlock), lookedInMemory: true)
    }

    /// The image for `source`, from the fastest layer that has it; the alternative sources are
    /// tried in order when it fails (not when it is cancelled).
    ///
    /// - Parameters:
    ///   - source: Where the image comes from.
    ///   - options: Options for this call, applied after ``defaultOptions``; nil for none.
    ///   - progressBlock: Called with bytes received and expected (-1 when unknown); not called for cache hits.
    /// - Returns: The image, which cache answered (``CacheType/none`` when downloaded or provided),
    ///   the source that succeeded and, when downloaded, the bytes and metrics.
    /// - Throws: ``MagpieError``: a ``MagpieError/requestFailed(reason:)`` or ``MagpieError/responseFailed(reason:)``
    ///   (``MagpieError/RequestFailureReason/recentlyFailed(_:previous:)`` for a URL on the failed-URL list,
    ///   ``MagpieError/RequestFailureReason/cancelled(_:)`` when the task is cancelled),
    ///   ``MagpieError/CacheFailureReason/notCached(key:)`` with ``MagpieOption/onlyFromCache``,
    ///   a ``MagpieError/decodingFailed(reason:)`` or ``MagpieError/processingFailed(reason:)``.
    ///   When the alternative sources all fail too, the main source's error.
    public func retrieveImage(
        with source: Source, options: [MagpieOption]? = nil, progressBlock: DownloadProgressBlock? = nil
    ) async throws -> RetrieveImageResult {
        if let hit = plainMemoryHit(source, key: nil, options: options ?? []) { return hit }
        return try await retrieveImageReporting(
            with: source, options: options ?? [], progress: DownloadProgress.handler(reportingTo: progressBlock), lookedInMemory: true)
    }

    /// The retrieval behind every public form, with progress as ``DownloadProgress`` values (the prefetcher, the
    /// binding and the CLI use it). Not public: a one-parameter progress closure could capture a trailing
    /// completion closure. `lookedInMemory`: the caller has tried ``plainMemoryHit(_:key:options:)`` and missed.
    package func retrieveImageReporting(
        with source: Source, options: [MagpieOption], progress: DownloadProgressHandler?, lookedInMemory: Bool = false
    ) async throws -> RetrieveImageResult {
        if !lookedInMemory, let hit = plainMemoryHit(source, key: nil, options: options) { return hit }
        let options = parse(options)
        let memoryChecked = options.readsPlainMemoryEntry
        do {
            let result = try await retrieve(
                source, originalSource: source, options: options, progress: progress, memoryChecked: memoryChecked)
            logger.debug("retrieved", metadata: [
                "key": "\(source.cacheKey)", "from": "\(result.cacheType)", "revalidated": "\(result.revalidated)",
            ])
            return result
        } catch {
            let first = Self.magpieError(error, source: source)
            logger.debug("retrieval failed", metadata: ["key": "\(source.cacheKey)", "error": "\(first)"])
            guard !first.isCancellation, !options.alternativeSources.isEmpty else { throw first }
            for alternative in options.alternativeSources {
                do {
                    return try await retrieve(alternative, originalSource: source, options: options, progress: progress)
                } catch {
                    let failure = Self.magpieError(error, source: alternative)
                    if failure.isCancellation { throw failure }
                    logger.debug("alternative source failed", metadata: ["key": "\(alternative.cacheKey)", "error": "\(failure)"])
                }
            }
            throw first
        }
    }

    /// The common memory hit, before the pipeline: the plain entry of `source` when `options` ask for nothing more and
    /// memory has it, without the request's derived keys and copies (a one-task hit cost 5× the raw lookup through the
    /// general path). Synchronous, so an async entry point answers a hit without awaiting a second async function.
    /// `sourceKey`: `source.cacheKey` when the caller has it at hand (``Resource/convertToSourceAndKey()``).
    @inline(never)
    private func plainMemoryHit(_ source: Source, key sourceKey: String?, options: [MagpieOption]) -> RetrieveImageResult? {
        let (options, filter) = parseWithCacheKeyFilter(options)
        guard options.readsPlainMemoryEntry else { return nil }
        let key = if let sourceKey, filter == nil { sourceKey } else { cacheKey(for: source, filter: filter) }
        guard let image = cache.memoryImage(forMemoryKey: key, extending: nil) else { return nil }
        logger.debug("retrieved", metadata: ["key": "\(source.cacheKey)", "from": "memory", "revalidated": "false"])
        return RetrieveImageResult(image: image, cacheType: .memory, source: source, dataCache: cache.dataCache, dataCacheKey: key)
    }

    /// Completion-handler form in Kingfisher's shape: `manager.retrieveImage(with: url) { result in … }`. The
    /// handler runs once, on the ``MagpieOption/callbackQueue(_:)`` (default: where the work finished); cancelling
    /// the returned task answers it with ``MagpieError/RequestFailureReason/cancelled(_:)``.
    ///
    /// - Parameters:
    ///   - source: Where the image comes from.
    ///   - options: Options for this call, applied after ``defaultOptions``; nil for none.
    ///   - progressBlock: Called with bytes received and expected (-1 when unknown).
    ///   - completionHandler: Receives the result or the error; nil to only warm the caches.
    /// - Returns: A task to cancel or wait for the retrieval.
    @discardableResult
    public func retrieveImage(
        with source: Source, options: [MagpieOption]? = nil, progressBlock: DownloadProgressBlock? = nil,
        completionHandler: (@Sendable (Result<RetrieveImageResult, MagpieError>) -> Void)?
    ) -> RetrieveImageTask {
        retrieveImageReporting(
            with: source, options: options ?? [], progress: DownloadProgress.handler(reportingTo: progressBlock),
            completionHandler: completionHandler)
    }

    /// The completion-handler retrieval behind the public forms, with ``DownloadProgress`` values (the binding uses it).
    package func retrieveImageReporting(
        with source: Source, options: [MagpieOption], progress: DownloadProgressHandler?,
        completionHandler: (@Sendable (Result<RetrieveImageResult, MagpieError>) -> Void)?
    ) -> RetrieveImageTask {
        let queue = parse(options).callbackQueue
        return RetrieveImageTask(source: source) {
            let result: Result<RetrieveImageResult, MagpieError>
            do {
                let value = try await self.retrieveImageReporting(with: source, options: options, progress: progress)
                // A cache hit finishes without noticing a cancel(); the handler still hears the cancel it asked for.
                result = Task.isCancelled ? .failure(Self.cancelled(source)) : .success(value)
            } catch {
                result = .failure(Self.magpieError(error, source: source))
            }
            if let completionHandler { queue.execute { completionHandler(result) } }
        }
    }

    /// Completion-handler form for a resource (a URL works too), in Kingfisher's shape.
    ///
    /// - Parameters:
    ///   - resource: A ``Resource`` or a `URL`.
    ///   - options: Options for this call, applied after ``defaultOptions``; nil for none.
    ///   - progressBlock: Called with bytes received and expected (-1 when unknown).
    ///   - completionHandler: Receives the result or the error, once; nil to only warm the caches.
    /// - Returns: A task to cancel or wait for the retrieval.
    @discardableResult
    public func retrieveImage(
        with resource: any Resource, options: [MagpieOption]? = nil, progressBlock: DownloadProgressBlock? = nil,
        completionHandler: (@Sendable (Result<RetrieveImageResult, MagpieError>) -> Void)?
    ) -> RetrieveImageTask {
        retrieveImage(
            with: resource.convertToSource(), options: options, progressBlock: progressBlock, completionHandler: completionHandler)
    }

    /// Where the variant `options` ask for is cached (memory, disk or not at all), without reading it.
    /// The prefetcher skips sources that are cached.
    ///
    /// - Parameters:
    ///   - source: The source to look for.
    ///   - options: Options that pick the cache, processor and decode variant, as for a retrieval.
    /// - Returns: ``CacheType/memory``, ``CacheType/disk`` or ``CacheType/none``.
    public func cachedType(for source: Source, options: [MagpieOption]? = nil) async -> CacheType {
        let request = RetrievalRequest(manager: self, source: source, options: parse(options ?? []))
        return await request.cache.imageCachedType(
            forKey: request.key, processorIdentifier: request.variantIdentifier, decodingOptions: request.readDecoding)
    }

    /// Any error as a `MagpieError`; Swift cancellation becomes `RequestFailureReason.cancelled`.
    static func magpieError(_ error: any Error, source: Source) -> MagpieError {
        if case .processingFailed(reason: .cancelled)? = error as? MagpieError { return cancelled(source) }
        if let error = error as? MagpieError { return error }
        if error is CancellationError { return cancelled(source) }
        return .requestFailed(reason: .dataProviderFailed(cacheKey: source.cacheKey, message: "\(error)"))
    }

    /// The cancellation error for `source`.
    static func cancelled(_ source: Source) -> MagpieError {
        .requestFailed(reason: .cancelled(source.url ?? URL(string: "magpie-source:cancelled")!))
    }
}

extension ImageManager {
    /// What the manager did since it was made; read it with ``ImageManager/statistics``.
    public struct Statistics: Sendable, Equatable {
        /// Downloads the manager started (a shared download counts once per manager call that made it).
        public var downloads = 0
        /// Conditional requests answered with `304 Not Modified`.
        public var notModified = 0
        /// Decodes of downloaded, provided or original-cache bytes.
        public var decodes = 0
        /// Runs of a processor other than ``DefaultImageProcessor``.
        public var processingRuns = 0
        /// Requests that joined a miss already running for the same variant instead of starting their own.
        public var coalesced = 0
        /// Requests refused at once because their URL is on the failed-URL list.
        public var failedFast = 0
        /// Variants made from the original cache instead of a download.
        public var processedFromOriginal = 0
        /// Stale entries served (`stale-while-revalidate` or `stale-if-error`).
        public var servedStale = 0
        /// `stale-while-revalidate` revalidations started in the background.
        public var backgroundRevalidations = 0
    }
}

/// The manager's counters.
final class ManagerCounters: Sendable {
    let downloads = Atomic<Int>(0)
    let notModified = Atomic<Int>(0)
    let decodes = Atomic<Int>(0)
    let processingRuns = Atomic<Int>(0)
    let failedFast = Atomic<Int>(0)
    let processedFromOriginal = Atomic<Int>(0)
    let servedStale = Atomic<Int>(0)
    let backgroundRevalidations = Atomic<Int>(0)

    func snapshot(joined: Int) -> ImageManager.Statistics {
        ImageManager.Statistics(
            downloads: downloads.load(ordering: .relaxed), notModified: notModified.load(ordering: .relaxed),
            decodes: decodes.load(ordering: .relaxed), processingRuns: processingRuns.load(ordering: .relaxed),
            coalesced: joined, failedFast: failedFast.load(ordering: .relaxed),
            processedFromOriginal: processedFromOriginal.load(ordering: .relaxed),
            servedStale: servedStale.load(ordering: .relaxed),
            backgroundRevalidations: backgroundRevalidations.load(ordering: .relaxed))
    }
}
