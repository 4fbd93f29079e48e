#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One option of a retrieval: pass a list, ``ImageManager`` parses it once
/// into ``MagpieParsedOptions``. A later option of the same kind wins, so a call's options
/// override the manager's ``ImageManager/defaultOptions``.
public enum MagpieOption: Sendable {
    // MARK: Caches
    /// The cache to read and write instead of the manager's.
    case targetCache(ImageCache)
    /// Where unprocessed originals are looked up and (with `cacheOriginalImage`) stored; default: the target cache.
    case originalCache(ImageCache)
    /// Skip the caches and download (the result is still stored).
    case forceRefresh
    /// Use the memory cache, else download: the disk cache is neither read nor consulted.
    case fromMemoryCacheOrRefresh
    /// Store in memory only, not on disk.
    case cacheMemoryOnly
    /// Return only after the disk write finished (by default the result comes back at once and
    /// the disk write finishes in the background).
    case waitForCache
    /// Never download: a miss fails with ``MagpieError/CacheFailureReason/notCached(key:)``.
    case onlyFromCache
    /// How processed images are written to and read from disk (default ``DefaultCacheSerializer``).
    case cacheSerializer(any CacheSerializer)
    /// With a processor, also store the downloaded bytes on disk as the original, so another
    /// processor later needs no download.
    case cacheOriginalImage
    /// Expiration of the memory entry written for this image.
    case memoryCacheExpiration(StorageExpiration)
    /// What a memory hit does to the entry's expiry.
    case memoryCacheAccessExtendingExpiration(ExpirationExtending)
    /// Expiration of the disk entry written for this image.
    case diskCacheExpiration(StorageExpiration)
    /// What a disk hit does to the entry's expiry.
    case diskCacheAccessExtendingExpiration(ExpirationExtending)
    /// When the disk entry has an `ETag` or `Last-Modified`, ask the server whether it changed
    /// (conditional request) even if the entry is fresh; `304` refreshes the entry and serves it.
    /// Ignored together with ``onlyFromCache``, which never touches the network.
    case revalidate
    /// Honour the stored `Cache-Control: max-age`: serve from the caches while the entry is
    /// fresh, revalidate (conditional request) once it is stale. `no-cache` means always stale.
    case respectCacheControl

    // MARK: Downloading
    /// The downloader to use instead of the manager's.
    case downloader(ImageDownloader)
    /// 0...1: position in the download queue (higher first); clamped to that range. Default 0.5.
    case downloadPriority(Double)
    /// Overrides the downloader's timeout for this request.
    case downloadTimeout(Duration)
    /// Changes the request before it is sent.
    case requestModifier(any ImageDownloadRequestModifier)
    /// Follows, changes or refuses redirects.
    case redirectHandler(any ImageDownloadRedirectHandler)
    /// Retries failed downloads.
    case retryStrategy(any RetryStrategy)
    /// Sources tried in order when the main one fails (not when it is cancelled).
    case alternativeSources([Source])
    /// Ignore the failed-URL list: download a URL even if it failed recently.
    case retryFailed

    // MARK: Decoding and processing
    /// How downloaded and cached bytes are decoded (target size, first frame only, limits, …).
    case decodingOptions(ImageDecodingOptions)
    /// Decode and process on the manager's processing queue rather than on the calling task's
    /// thread, keeping the cooperative pool free for I/O while big images are decoded.
    case backgroundDecode
    /// The scale (pixels per point) given to the resulting image.
    case scaleFactor(Double)
    /// Decode every frame of animations (overrides an earlier ``onlyLoadFirstFrame``, for example one in
    /// ``ImageManager/defaultOptions``).
    case preloadAllAnimationData
    /// Decode only the first frame of animations (overrides an earlier ``preloadAllAnimationData``).
    case onlyLoadFirstFrame
    /// Processes the image before it is cached; its identifier is part of the cache key.
    case processor(any ImageProcessor)
    /// Shorthand for a ``DownsamplingImageProcessor`` of this size run before ``processor(_:)``.
    case downsampling(PixelSize)
    /// Changes the returned image only; never cached.
    case imageModifier(any ImageModifier)

    // MARK: Delivery and binding
    /// Where completion handlers run (default ``CallbackQueue/untouch``).
    case callbackQueue(CallbackQueue)
    /// View binding: shown by the target when the retrieval fails (not when it is cancelled); nil clears the target.
    case onFailureImage(Image?)
    /// View binding: keep showing the current image while loading instead of the placeholder.
    case keepCurrentImageWhileLoading
}

/// `[MagpieOption]` parsed into fields: what the pipeline reads. Build one with ``init(_:)``.
public struct MagpieParsedOptions: Sendable {
    /// Set by ``MagpieOption/targetCache(_:)``; nil (the default): the manager's ``ImageManager/cache``.
    public var targetCache: ImageCache?
    /// Set by ``MagpieOption/originalCache(_:)``; nil (the default): the target cache.
    public var originalCache: ImageCache?
    /// Set by ``MagpieOption/forceRefresh``; default false.
    public var forceRefresh = false
    /// Set by ``MagpieOption/fromMemoryCacheOrRefresh``; default false.
    public var fromMemoryCacheOrRefresh = false
    /// Set by ``MagpieOption/cacheMemoryOnly``; default false.
    public var cacheMemoryOnly = false
    /// Set by ``MagpieOption/waitForCache``; default false.
    public var waitForCache = false
    /// Set by ``MagpieOption/onlyFromCache``; default false.
    public var onlyFromCache = false
    /// Set by ``MagpieOption/cacheSerializer(_:)``; nil (the default): originals are stored as the bytes that came in,
    /// processed images by ``DefaultCacheSerializer``.
    public var cacheSerializer: (any CacheSerializer)?
    /// Set by ``MagpieOption/cacheOriginalImage``; default false.
    public var cacheOriginalImage = false
    /// Set by ``MagpieOption/memoryCacheExpiration(_:)``; nil (the default): the memory storage's
    /// ``MemoryStorage/Config/expiration``.
    public var memoryCacheExpiration: StorageExpiration?
    /// Set by ``MagpieOption/memoryCacheAccessExtendingExpiration(_:)``; nil (the default): the memory storage's
    /// ``MemoryStorage/Config/accessExtending``.
    public var memoryCacheAccessExtendingExpiration: ExpirationExtending?
    /// Set by ``MagpieOption/diskCacheExpiration(_:)``; nil (the default): the disk storage's
    /// ``DiskStorage/Config/expiration``.
    public var diskCacheExpiration: StorageExpiration?
    /// Set by ``MagpieOption/diskCacheAccessExtendingExpiration(_:)``; nil (the default): the disk storage's
    /// ``DiskStorage/Config/accessExtending``.
    public var diskCacheAccessExtendingExpiration: ExpirationExtending?
    /// Set by ``MagpieOption/revalidate``; default false.
    public var revalidate = false
    /// Set by ``MagpieOption/respectCacheControl``; default false.
    public var respectCacheControl = false
    /// Set by ``MagpieOption/downloader(_:)``; nil (the default): the manager's ``ImageManager/downloader``.
    public var downloader: ImageDownloader?
    /// Set by ``MagpieOption/downloadPriority(_:)``, clamped to 0...1; default 0.5.
    public var downloadPriority: Double = 0.5
    /// Set by ``MagpieOption/downloadTimeout(_:)``; nil (the default): the downloader's
    /// ``ImageDownloader/Configuration/downloadTimeout``.
    public var downloadTimeout: Duration?
    /// Set by ``MagpieOption/requestModifier(_:)``; default nil (only the downloader's own modifier runs).
    public var requestModifier: (any ImageDownloadRequestModifier)?
    /// Set by ``MagpieOption/redirectHandler(_:)``; default nil (redirects are followed).
    public var redirectHandler: (any ImageDownloadRedirectHandler)?
    /// Set by ``MagpieOption/retryStrategy(_:)``; nil (the default): the downloader's
    /// ``ImageDownloader/Configuration/retryStrategy``.
    public var retryStrategy: (any RetryStrategy)?
    /// Set by ``MagpieOption/alternativeSources(_:)``; default empty.
    public var alternativeSources: [Source] = []
    /// Set by ``MagpieOption/retryFailed``; default false.
    public var retryFailed = false
    /// Set by ``MagpieOption/decodingOptions(_:)``; default ``ImageDecodingOptions/default``. See also
    /// ``effectiveDecodingOptions``.
    public var decodingOptions: ImageDecodingOptions = .default
    /// Set by ``MagpieOption/backgroundDecode``; default false.
    public var backgroundDecode = false
    /// Set by ``MagpieOption/scaleFactor(_:)``; nil (the default): the scale in ``decodingOptions``.
    public var scaleFactor: Double?
    /// From `onlyLoadFirstFrame` (true) or `preloadAllAnimationData` (false), whichever came last.
    public var onlyFirstFrame: Bool?
    /// Set by ``MagpieOption/processor(_:)``; default ``DefaultImageProcessor/default`` (no processing). See also
    /// ``effectiveProcessor``.
    public var processor: any ImageProcessor = DefaultImageProcessor.default
    /// Set by ``MagpieOption/downsampling(_:)``; default nil.
    public var downsampling: PixelSize?
    /// Set by ``MagpieOption/imageModifier(_:)``; default nil.
    public var imageModifier: (any ImageModifier)?
    /// Set by ``MagpieOption/callbackQueue(_:)``; default ``CallbackQueue/untouch``.
    public var callbackQueue: CallbackQueue = .untouch
    /// Set by ``MagpieOption/onFailureImage(_:)``: nil when the option was not given, `.some(nil)` to clear the target
    /// on failure.
    public var onFailureImage: Image??
    /// Set by ``MagpieOption/keepCurrentImageWhileLoading``; default false.
    public var keepCurrentImageWhileLoading = false

    /// Parses `options`; a later option of the same kind overrides an earlier one.
    ///
    /// - Parameter options: The options, in order (the manager puts its ``ImageManager/defaultOptions`` first).
    public init(_ options: [MagpieOption]) {
        for option in options { apply(option) }
    }

    private mutating func apply(_ option: MagpieOption) {
        switch option {
        case .targetCache(let value): targetCache = value
        case .originalCache(let value): originalCache = value
        case .forceRefresh: forceRefresh = true
        case .fromMemoryCacheOrRefresh: fromMemoryCacheOrRefresh = true
        case .cacheMemoryOnly: cacheMemoryOnly = true
        case .waitForCache: waitForCache = true
        case .onlyFromCache: onlyFromCache = true
        case .cacheSerializer(let value): cacheSerializer = value
        case .cacheOriginalImage: cacheOriginalImage = true
        case .memoryCacheExpiration(let value): memoryCacheExpiration = value
        case .memoryCacheAccessExtendingExpiration(let value): memoryCacheAccessExtendingExpiration = value
        case .diskCacheExpiration(let value): diskCacheExpiration = value
        case .diskCacheAccessExtendingExpiration(let value): diskCacheAccessExtendingExpiration = value
        case .revalidate: revalidate = true
        case .respectCacheControl: respectCacheControl = true
        case .downloader(let value): downloader = value
        case .downloadPriority(let value): downloadPriority = min(1, max(0, value))
        case .downloadTimeout(let value): downloadTimeout = value
        case .requestModifier(let value): requestModifier = value
        case .redirectHandler(let value): redirectHandler = value
        case .retryStrategy(let value): retryStrategy = value
        case .alternativeSources(let value): alternativeSources = value
        case .retryFailed: retryFailed = true
        case .decodingOptions(let value): decodingOptions = value
        case .backgroundDecode: backgroundDecode = true
        case .scaleFactor(let value): scaleFactor = value
        case .preloadAllAnimationData: onlyFirstFrame = false
        case .onlyLoadFirstFrame: onlyFirstFrame = true
        case .processor(let value): processor = value
        case .downsampling(let value): downsampling = value
        case .imageModifier(let value): imageModifier = value
        case .callbackQueue(let value): callbackQueue = value
        case .onFailureImage(let value): onFailureImage = .some(value)
        case .keepCurrentImageWhileLoading: keepCurrentImageWhileLoading = true
        }
    }

    /// ``decodingOptions`` with ``scaleFactor`` and ``onlyFirstFrame`` applied, when they are set.
    public var effectiveDecodingOptions: ImageDecodingOptions {
        var options = decodingOptions
        if let scaleFactor { options.scale = scaleFactor }
        if let onlyFirstFrame { options.onlyFirstFrame = onlyFirstFrame }
        return options
    }

    /// The processor that runs: a ``DownsamplingImageProcessor`` for ``downsampling`` (when set) followed by
    /// ``processor``.
    public var effectiveProcessor: any ImageProcessor {
        guard let downsampling else { return processor }
        return DownsamplingImageProcessor(size: downsampling) |> processor
    }

    /// The download options these imply.
    func downloadOptions(validators: DiskStorage.Validators? = nil) -> ImageDownloadOptions {
        ImageDownloadOptions(
            timeout: downloadTimeout, priority: downloadPriority, requestModifier: requestModifier,
            redirectHandler: redirectHandler, retryStrategy: retryStrategy, decodingOptions: effectiveDecodingOptions,
            validators: validators)
    }
}
