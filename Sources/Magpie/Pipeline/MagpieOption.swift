import MagpieCore

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
    /// Follow the origin's HTTP caching rules (RFC 9111, as a private cache): freshness from `max-age`, `Expires` −
    /// `Date` or the `Last-Modified` heuristic, aged by `Age` and transit time; `no-store` responses are never cached,
    /// `no-cache` ones revalidated before every use, `must-revalidate` ones never served stale; `immutable` ones not
    /// revalidated while fresh even with ``revalidate``; `stale-while-revalidate` serves at once and revalidates once
    /// in the background; `stale-if-error` serves the stale entry when revalidation fails; `Vary` keeps one entry per
    /// combination of the named request headers. Needs a data cache (where the response headers are kept).
    case respectCacheControl
    /// Which cache layers this retrieval reads and writes (default ``CacheAccess/all``).
    case cacheAccess(CacheAccess)
    /// Whether this retrieval looks in the memory cache (default true).
    case memoryCacheReads(Bool)
    /// Whether this retrieval stores in the memory cache (default true).
    case memoryCacheWrites(Bool)
    /// Whether this retrieval looks in the data (disk) cache (default true).
    case diskCacheReads(Bool)
    /// Whether this retrieval stores in the data (disk) cache (default true).
    case diskCacheWrites(Bool)

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
    /// Ignore the failed-URL list: download a URL even if it failed recently. Without it, a URL that failed for good
    /// (404, not an image, undecodable…) is refused at once only until its entry expires: 60 s by default
    /// (``FailedURLList/init(capacity:expiration:notFoundExpiration:clock:)`` sets it, and a longer one for 404/410),
    /// so a file that appears on the origin later is served without this option.
    case retryFailed

    // MARK: Decoding and processing
    /// How downloaded and cached bytes are decoded (target size, first frame only, limits, …).
    case decodingOptions(ImageDecodingOptions)
    /// Kingfisher's option (decode off the calling thread), accepted for compatibility and without effect: Magpie
    /// never decodes on the caller. Downloaded bytes and cached originals are decoded and processed on the manager's
    /// ``ImageManager/processingExecutor``, disk hits decoded on the cache's ``ImageCache/codingExecutor`` (both off
    /// the cooperative pool), and the image handed back is decoded pixels, with nothing left to decode later.
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
