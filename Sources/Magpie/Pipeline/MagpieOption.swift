#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One option of a retrieval, in Kingfisher's style: pass a list, `ImageManager` parses it once
/// into `MagpieParsedOptions`. A later option of the same kind wins, so a call's options
/// override the manager's `defaultOptions`.
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
    /// Never download: a miss fails with `CacheFailureReason.notCached`.
    case onlyFromCache
    /// How processed images are written to and read from disk (default `DefaultCacheSerializer`).
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
    /// Ignored together with `onlyFromCache`, which never touches the network.
    case revalidate
    /// Honour the stored `Cache-Control: max-age`: serve from the caches while the entry is
    /// fresh, revalidate (conditional request) once it is stale. `no-cache` means always stale.
    case respectCacheControl

    // MARK: Downloading
    /// The downloader to use instead of the manager's.
    case downloader(ImageDownloader)
    /// 0...1: position in the download queue (higher first).
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
    /// Decode every frame of animations (overrides an earlier `onlyLoadFirstFrame`, for example one in `defaultOptions`).
    case preloadAllAnimationData
    /// Decode only the first frame of animations (overrides an earlier `preloadAllAnimationData`).
    case onlyLoadFirstFrame
    /// Processes the image before it is cached; its identifier is part of the cache key.
    case processor(any ImageProcessor)
    /// Shorthand for a `DownsamplingImageProcessor(size:)` run before `processor`.
    case downsampling(PixelSize)
    /// Changes the returned image only; never cached.
    case imageModifier(any ImageModifier)

    // MARK: Delivery and binding
    /// Where completion handlers run.
    case callbackQueue(CallbackQueue)
    /// View binding: shown by the target when the retrieval fails.
    case onFailureImage(Image?)
    /// View binding: keep showing the current image while loading instead of the placeholder.
    case keepCurrentImageWhileLoading
}

/// `[MagpieOption]` parsed into fields.
public struct MagpieParsedOptions: Sendable {
    /// See `MagpieOption.targetCache`.
    public var targetCache: ImageCache?
    /// See `MagpieOption.originalCache`.
    public var originalCache: ImageCache?
    /// See `MagpieOption.forceRefresh`.
    public var forceRefresh = false
    /// See `MagpieOption.fromMemoryCacheOrRefresh`.
    public var fromMemoryCacheOrRefresh = false
    /// See `MagpieOption.cacheMemoryOnly`.
    public var cacheMemoryOnly = false
    /// See `MagpieOption.waitForCache`.
    public var waitForCache = false
    /// See `MagpieOption.onlyFromCache`.
    public var onlyFromCache = false
    /// nil: originals are stored as the bytes that came in, processed images by `DefaultCacheSerializer`.
    public var cacheSerializer: (any CacheSerializer)?
    /// See `MagpieOption.cacheOriginalImage`.
    public var cacheOriginalImage = false
    /// See `MagpieOption.memoryCacheExpiration`.
    public var memoryCacheExpiration: StorageExpiration?
    /// See `MagpieOption.memoryCacheAccessExtendingExpiration`.
    public var memoryCacheAccessExtendingExpiration: ExpirationExtending?
    /// See `MagpieOption.diskCacheExpiration`.
    public var diskCacheExpiration: StorageExpiration?
    /// See `MagpieOption.diskCacheAccessExtendingExpiration`.
    public var diskCacheAccessExtendingExpiration: ExpirationExtending?
    /// See `MagpieOption.revalidate`.
    public var revalidate = false
    /// See `MagpieOption.respectCacheControl`.
    public var respectCacheControl = false
    /// See `MagpieOption.downloader`.
    public var downloader: ImageDownloader?
    /// See `MagpieOption.downloadPriority`.
    public var downloadPriority: Double = 0.5
    /// See `MagpieOption.downloadTimeout`.
    public var downloadTimeout: Duration?
    /// See `MagpieOption.requestModifier`.
    public var requestModifier: (any ImageDownloadRequestModifier)?
    /// See `MagpieOption.redirectHandler`.
    public var redirectHandler: (any ImageDownloadRedirectHandler)?
    /// See `MagpieOption.retryStrategy`.
    public var retryStrategy: (any RetryStrategy)?
    /// See `MagpieOption.alternativeSources`.
    public var alternativeSources: [Source] = []
    /// See `MagpieOption.retryFailed`.
    public var retryFailed = false
    /// See `MagpieOption.decodingOptions`.
    public var decodingOptions: ImageDecodingOptions = .default
    /// See `MagpieOption.backgroundDecode`.
    public var backgroundDecode = false
    /// See `MagpieOption.scaleFactor`.
    public var scaleFactor: Double?
    /// From `onlyLoadFirstFrame` (true) or `preloadAllAnimationData` (false), whichever came last.
    public var onlyFirstFrame: Bool?
    /// See `MagpieOption.processor`.
    public var processor: any ImageProcessor = DefaultImageProcessor.default
    /// See `MagpieOption.downsampling`.
    public var downsampling: PixelSize?
    /// See `MagpieOption.imageModifier`.
    public var imageModifier: (any ImageModifier)?
    /// See `MagpieOption.callbackQueue`.
    public var callbackQueue: CallbackQueue = .untouch
    /// See `MagpieOption.onFailureImage`.
    public var onFailureImage: Image??
    /// See `MagpieOption.keepCurrentImageWhileLoading`.
    public var keepCurrentImageWhileLoading = false

    /// Parses `options`.
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

    /// `decodingOptions` with `scaleFactor` and the first-frame choice applied.
    public var effectiveDecodingOptions: ImageDecodingOptions {
        var options = decodingOptions
        if let scaleFactor { options.scale = scaleFactor }
        if let onlyFirstFrame { options.onlyFirstFrame = onlyFirstFrame }
        return options
    }

    /// The processor that runs: `downsampling`'s processor (when set) followed by `processor`.
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
