#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `ImageManager.retrieveImage(with:options:progressBlock:)` produced and where it came from.
public struct RetrieveImageResult: Sendable {
    /// The image, processed and modified as the options asked.
    public var image: Image
    /// Which cache answered; ``CacheType/none`` when it was downloaded (or read from a data provider).
    public var cacheType: CacheType
    /// The source the image came from: ``originalSource`` or one of its ``MagpieOption/alternativeSources(_:)``.
    public var source: Source
    /// The source the caller asked for.
    public var originalSource: Source
    /// The bytes, when they were downloaded or provided in this call (not for cache hits).
    public var originalData: Data?
    /// True when a conditional request got `304 Not Modified` and the cached entry was refreshed.
    public var revalidated: Bool
    /// The download's timings and byte count, when a request was made (a 304 included).
    public var downloadMetrics: DownloadMetrics?
    /// Where ``data()`` reads the bytes of a hit (no closure: a memory hit must not allocate).
    private let dataCache: (any DataCaching)?
    private let dataCacheKey: String?

    /// A result; the pipeline makes these.
    ///
    /// - Parameters:
    ///   - image: The image.
    ///   - cacheType: Which cache answered.
    ///   - source: The source that succeeded.
    ///   - originalSource: The source asked for.
    ///   - originalData: The downloaded or provided bytes, if any.
    ///   - revalidated: Whether a 304 refreshed the cached entry.
    ///   - downloadMetrics: The download's metrics, if a request was made.
    ///   - dataCache: The data cache that holds this image's bytes, if any (for ``data()``).
    ///   - dataCacheKey: The key of those bytes in `dataCache` (``CacheKey/stored(_:variant:)``).
    public init(
        image: Image, cacheType: CacheType, source: Source, originalSource: Source, originalData: Data?, revalidated: Bool,
        downloadMetrics: DownloadMetrics? = nil, dataCache: (any DataCaching)? = nil, dataCacheKey: String? = nil
    ) {
        self.image = image
        self.cacheType = cacheType
        self.source = source
        self.originalSource = originalSource
        self.originalData = originalData
        self.revalidated = revalidated
        self.downloadMetrics = downloadMetrics
        self.dataCache = dataCache
        self.dataCacheKey = dataCacheKey
    }

    /// The image's bytes, as Kingfisher's `RetrieveImageResult.data()`: the bytes downloaded or provided in this
    /// call, else the bytes the data cache holds for this image (read now, from the cache that answered). nil when
    /// there are none (a memory hit whose variant has no data-cache entry, say).
    public func data() async -> Data? {
        if let originalData { return originalData }
        guard let dataCache, let dataCacheKey else { return nil }
        return try? await dataCache.cachedEntry(forKey: dataCacheKey, extendingExpiration: ExpirationExtending.none)?.data
    }
}
