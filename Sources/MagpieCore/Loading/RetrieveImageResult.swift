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
    public var source: Source {
        // The caller's source stays what it was when the source that succeeded changes.
        didSet { if askedFor == nil { askedFor = oldValue } }
    }
    /// The source the caller asked for.
    public var originalSource: Source {
        get { askedFor ?? source }
        set { askedFor = newValue }
    }
    /// The bytes, when they were downloaded or provided in this call (not for cache hits).
    public var originalData: Data? {
        get { transfer?.originalData }
        set { transfer = Transfer.with(transfer) { $0.originalData = newValue } }
    }
    /// True when a conditional request got `304 Not Modified` and the cached entry was refreshed.
    public var revalidated: Bool
    /// The download's timings and byte count, when a request was made (a 304 included).
    public var downloadMetrics: DownloadMetrics? {
        get { transfer?.downloadMetrics }
        set { transfer = Transfer.with(transfer) { $0.downloadMetrics = newValue } }
    }
    /// How the result was served in HTTP caching terms: fresh from a cache, revalidated, stale, or downloaded.
    public var served: Served
    /// The validators and caching headers of the source's response (`Last-Modified`, `ETag`, `Cache-Control`, …) when
    /// the pipeline had them at hand: a download, a disk hit whose freshness was checked, a result made from a cached
    /// original; nil otherwise (a memory hit). Reading them here costs no trip to the data cache.
    public var validators: HTTPValidators? {
        get { transfer?.validators }
        set { transfer = Transfer.with(transfer) { $0.validators = newValue } }
    }
    /// The source asked for, when it is not ``source`` (nil: the same, as on every hit: no second copy).
    private var askedFor: Source?
    /// What a transfer left (bytes, metrics, validators) behind one reference, nil for a hit: a result is copied through
    /// every async frame of a retrieval, and inline these fields made it about 450 bytes, most of a memory hit's copying.
    private var transfer: Transfer?
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
    ///   - validators: The source response's validators, when known.
    public init(
        image: Image, cacheType: CacheType, source: Source, originalSource: Source, originalData: Data?, revalidated: Bool,
        downloadMetrics: DownloadMetrics? = nil, dataCache: (any DataCaching)? = nil, dataCacheKey: String? = nil,
        validators: HTTPValidators? = nil
    ) {
        self.init(image: image, cacheType: cacheType, source: source, revalidated: revalidated, dataCache: dataCache,
                  dataCacheKey: dataCacheKey)
        askedFor = originalSource
        if originalData != nil || downloadMetrics != nil || validators != nil {
            transfer = Transfer(originalData: originalData, downloadMetrics: downloadMetrics, validators: validators)
        }
    }

    /// A hit's result: the source asked for is the one that answered, and nothing was transferred.
    package init(
        image: Image, cacheType: CacheType, source: Source, revalidated: Bool = false, dataCache: (any DataCaching)?,
        dataCacheKey: String?
    ) {
        self.image = image
        self.cacheType = cacheType
        self.source = source
        self.revalidated = revalidated
        self.served = revalidated ? .revalidated : cacheType == .none ? .downloaded : .fresh
        self.dataCache = dataCache
        self.dataCacheKey = dataCacheKey
    }

    /// The fields a transfer sets, immutable (a setter makes a new one).
    private final class Transfer: Sendable {
        let originalData: Data?
        let downloadMetrics: DownloadMetrics?
        let validators: HTTPValidators?

        init(originalData: Data?, downloadMetrics: DownloadMetrics?, validators: HTTPValidators?) {
            self.originalData = originalData
            self.downloadMetrics = downloadMetrics
            self.validators = validators
        }

        typealias Fields = (originalData: Data?, downloadMetrics: DownloadMetrics?, validators: HTTPValidators?)

        /// `old`'s fields with `change` applied; nil when none is left.
        static func with(_ old: Transfer?, _ change: (inout Fields) -> Void) -> Transfer? {
            var fields: Fields = (old?.originalData, old?.downloadMetrics, old?.validators)
            change(&fields)
            guard fields.originalData != nil || fields.downloadMetrics != nil || fields.validators != nil else { return nil }
            return Transfer(originalData: fields.originalData, downloadMetrics: fields.downloadMetrics, validators: fields.validators)
        }
    }

    /// How a result was served, in HTTP caching terms (RFC 9111).
    public enum Served: Sendable, Equatable, CustomStringConvertible {
        /// From a cache, without asking the origin (fresh, or no HTTP rules were asked for).
        case fresh
        /// From a cache after the origin answered `304 Not Modified`.
        case revalidated
        /// From a cache although stale, as `stale-while-revalidate` or `stale-if-error` allow.
        case stale(StaleReason)
        /// Downloaded (or read from a data provider) in this call.
        case downloaded

        /// `fresh`, `revalidated`, `stale` or `downloaded`.
        public var description: String {
            switch self {
            case .fresh: "fresh"
            case .revalidated: "revalidated"
            case .stale: "stale"
            case .downloaded: "downloaded"
            }
        }
    }

    /// Why a stale entry was served.
    public enum StaleReason: String, Sendable, Equatable {
        /// Within `stale-while-revalidate`: served at once while one revalidation runs in the background.
        case whileRevalidating
        /// Within `stale-if-error`: the revalidation failed (connection error, timeout, 5xx).
        case revalidationFailed
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
