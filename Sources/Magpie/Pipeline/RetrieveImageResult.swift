#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ``ImageManager/retrieveImage(with:options:progress:)-(Source,_,_)`` produced and where it came from.
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
}
