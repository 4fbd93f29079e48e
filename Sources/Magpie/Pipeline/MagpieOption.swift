#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One option of a retrieval, in Kingfisher's style: pass a list, `ImageManager` parses it once
/// into `MagpieParsedOptions` (a later option of the same kind wins).
public enum MagpieOption: Sendable {
    /// The cache to read and write instead of the manager's.
    case targetCache(ImageCache)
    /// The downloader to use instead of the manager's.
    case downloader(ImageDownloader)
    /// 0...1: position in the download queue (higher first).
    case downloadPriority(Double)
    /// Overrides the downloader's timeout for this request.
    case downloadTimeout(Duration)
    /// Skip the caches and download (the result is still stored).
    case forceRefresh
    /// Never download: a miss fails with `CacheFailureReason.notCached`.
    case onlyFromCache
    /// Store in memory only, not on disk.
    case cacheMemoryOnly
    /// When the disk entry has an `ETag` or `Last-Modified`, ask the server whether it changed
    /// (conditional request) even if the entry is fresh; `304` refreshes the entry and serves it.
    /// Ignored together with `onlyFromCache`, which never touches the network.
    case revalidate
    /// Changes the request before it is sent.
    case requestModifier(any ImageDownloadRequestModifier)
    /// Follows, changes or refuses redirects.
    case redirectHandler(any ImageDownloadRedirectHandler)
    /// Retries failed downloads.
    case retryStrategy(any RetryStrategy)
    /// How downloaded and cached bytes are decoded (target size, first frame only, limits, …).
    case decodingOptions(ImageDecodingOptions)
    /// Expiration of the disk entry written for this image.
    case diskCacheExpiration(StorageExpiration)
}

/// `[MagpieOption]` parsed into fields.
public struct MagpieParsedOptions: Sendable {
    /// See `MagpieOption.targetCache`.
    public var targetCache: ImageCache?
    /// See `MagpieOption.downloader`.
    public var downloader: ImageDownloader?
    /// See `MagpieOption.downloadPriority`.
    public var downloadPriority: Double = 0.5
    /// See `MagpieOption.downloadTimeout`.
    public var downloadTimeout: Duration?
    /// See `MagpieOption.forceRefresh`.
    public var forceRefresh = false
    /// See `MagpieOption.onlyFromCache`.
    public var onlyFromCache = false
    /// See `MagpieOption.cacheMemoryOnly`.
    public var cacheMemoryOnly = false
    /// See `MagpieOption.revalidate`.
    public var revalidate = false
    /// See `MagpieOption.requestModifier`.
    public var requestModifier: (any ImageDownloadRequestModifier)?
    /// See `MagpieOption.redirectHandler`.
    public var redirectHandler: (any ImageDownloadRedirectHandler)?
    /// See `MagpieOption.retryStrategy`.
    public var retryStrategy: (any RetryStrategy)?
    /// See `MagpieOption.decodingOptions`.
    public var decodingOptions: ImageDecodingOptions = .default
    /// See `MagpieOption.diskCacheExpiration`.
    public var diskCacheExpiration: StorageExpiration?

    /// Parses `options`.
    public init(_ options: [MagpieOption]) {
        for option in options {
            switch option {
            case .targetCache(let cache): targetCache = cache
            case .downloader(let value): downloader = value
            case .downloadPriority(let value): downloadPriority = min(1, max(0, value))
            case .downloadTimeout(let value): downloadTimeout = value
            case .forceRefresh: forceRefresh = true
            case .onlyFromCache: onlyFromCache = true
            case .cacheMemoryOnly: cacheMemoryOnly = true
            case .revalidate: revalidate = true
            case .requestModifier(let value): requestModifier = value
            case .redirectHandler(let value): redirectHandler = value
            case .retryStrategy(let value): retryStrategy = value
            case .decodingOptions(let value): decodingOptions = value
            case .diskCacheExpiration(let value): diskCacheExpiration = value
            }
        }
    }

    /// The download options these imply.
    func downloadOptions(validators: DiskStorage.Validators? = nil) -> ImageDownloadOptions {
        ImageDownloadOptions(
            timeout: downloadTimeout, priority: downloadPriority, requestModifier: requestModifier,
            redirectHandler: redirectHandler, retryStrategy: retryStrategy, decodingOptions: decodingOptions,
            validators: validators)
    }
}
