import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One retrieval's derived facts: its cache key, processor, the variant it caches under and
/// the decoding options for bytes and for cached entries, computed once per call.
struct RetrievalRequest: Sendable {
    let source: Source
    var options: MagpieParsedOptions
    /// The cache key (after the manager's cache-key filter; with a `#vary(…)` suffix for a `Vary` alternative).
    private(set) var key: String
    let processor: any ImageProcessor
    /// "" for the original; otherwise the processor's identifier, plus the decoding variant when
    /// the decoding options change pixels (a processed image made from a downsampled decode is
    /// not the one made from a full decode, on disk either).
    let variantIdentifier: String
    let cache: ImageCache
    let originalCache: ImageCache
    /// How downloaded, provided or original bytes are decoded.
    let decoding: ImageDecodingOptions
    /// How the variant's cached bytes are decoded: a processed image is already at its size.
    let readDecoding: ImageDecodingOptions
    /// Writes the variant to disk.
    let serializer: any CacheSerializer

    init(manager: ImageManager, source: Source, options: MagpieParsedOptions) {
        self.source = source
        self.options = options
        key = manager.cacheKey(for: source)
        processor = options.effectiveProcessor
        cache = options.targetCache ?? manager.cache
        originalCache = options.originalCache ?? cache
        decoding = options.effectiveDecodingOptions
        let identifier = processor.identifier
        if identifier.isEmpty {
            variantIdentifier = ""
            readDecoding = decoding
            serializer = options.cacheSerializer ?? ImageManager.originalBytes
        } else {
            variantIdentifier = CacheKey.variant(processorIdentifier: identifier, decodingVariant: decoding.variantIdentifier)
            var read = decoding
            read.targetSize = nil
            readDecoding = read
            serializer = options.cacheSerializer ?? DefaultCacheSerializer.default
        }
    }

    var isProcessed: Bool { !variantIdentifier.isEmpty }

    /// This request under the key of one `Vary` alternative: the cached response whose `Vary` headers had these
    /// request values. Every layer (memory, variants, original) then uses the alternative's key.
    ///
    /// - Parameter varying: The request's values of the headers the stored response's `Vary` names.
    func varying(_ varying: [HTTPHeaderField]) -> RetrievalRequest {
        var copy = self
        copy.key = key + "#vary(" + varying.map { "\($0.name)=\($0.value)" }.joined(separator: "&") + ")"
        return copy
    }

    /// What the loader is asked for: this retrieval's network options, a conditional load's validators, and, when the
    /// cache's data layer is a ``DiskStorage``, its spool folder (a large body is written on the volume it will be
    /// stored on, not in the system's temporary folder). Another data cache offers no folder: the loader uses its own.
    ///
    /// - Parameters:
    ///   - validators: A cached copy's validators, for a conditional load; nil for an unconditional one.
    ///   - progress: Receives the load's progress.
    func loaderRequest(validators: HTTPValidators? = nil, progress: DownloadProgressHandler? = nil) -> ImageDataRequest {
        ImageDataRequest(
            source: source, priority: options.downloadPriority, timeout: options.downloadTimeout,
            requestModifier: options.requestModifier, redirectHandler: options.redirectHandler,
            retryStrategy: options.retryStrategy, validators: validators, spoolDirectory: cache.diskStorage?.spoolDirectory,
            progress: progress)
    }

    /// How the caches are asked for the variant.
    var retrieval: ImageCacheRetrievalOptions {
        ImageCacheRetrievalOptions(
            processorIdentifier: variantIdentifier, decodingOptions: readDecoding, cacheSerializer: serializer,
            memoryOnly: options.fromMemoryCacheOrRefresh, memoryExpiration: options.memoryCacheExpiration,
            memoryAccessExtending: options.memoryCacheAccessExtendingExpiration,
            diskAccessExtending: options.diskCacheAccessExtendingExpiration,
            promotesToMemory: options.cacheAccess.contains(.memoryWrites))
    }

    /// The memory key the variant is stored under.
    var memoryKey: String {
        ImageCache.memoryKey(ImageCache.computedKey(key, processorIdentifier: variantIdentifier), decodingOptions: readDecoding)
    }

    /// Requests with equal keys want the same result and may share one run of the miss path,
    /// which runs with the first caller's options: so every option that changes how the miss
    /// path runs is in the key, and a request that brings its own network behaviour (modifier,
    /// redirect handler, retry strategy, downloader, timeout, serializer, limits) shares with
    /// nobody (nil).
    func coalescingKey(skipCaches: Bool) -> String? {
        if options.requestModifier != nil || options.redirectHandler != nil || options.retryStrategy != nil
            || options.downloader != nil || options.downloadTimeout != nil || options.cacheSerializer != nil
            || decoding.limits != .default
        {
            return nil
        }
        var parts = "\(ObjectIdentifier(cache).hashValue)|\(ObjectIdentifier(originalCache).hashValue)|" + memoryKey
        if skipCaches { parts += "|refresh" }
        if options.onlyFromCache { parts += "|cache-only" }
        if options.cacheMemoryOnly { parts += "|memory-only" }
        if options.fromMemoryCacheOrRefresh { parts += "|memory-or-refresh" }
        if options.retryFailed { parts += "|retry-failed" }
        if options.waitForCache { parts += "|wait" }
        if options.cacheOriginalImage { parts += "|keep-original" }
        if options.respectCacheControl { parts += "|http" }
        if options.cacheAccess != .all { parts += "|layers:\(options.cacheAccess.rawValue)" }
        return parts
    }
}
