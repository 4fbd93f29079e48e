#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Ties the caches and the downloader together: memory → disk → (revalidate) → download →
/// decode → store. Kingfisher's `KingfisherManager`.
public final class ImageManager: Sendable {
    /// The shared manager: `ImageDownloader.default` and `ImageCache.default`.
    public static let shared = ImageManager(downloader: .default, cache: .default)

    /// Downloads for this manager unless an option names another downloader.
    public let downloader: ImageDownloader
    /// Caches for this manager unless an option names another cache.
    public let cache: ImageCache

    /// A manager over the given downloader and cache.
    public init(downloader: ImageDownloader, cache: ImageCache) {
        self.downloader = downloader
        self.cache = cache
    }

    /// Unprocessed images are stored as the bytes that came in: re-encoding would lose quality,
    /// and the stored ETag describes exactly those bytes.
    private static let originalBytes = DefaultCacheSerializer(preferCacheOriginalData: true)

    /// The image for `resource` (a URL works too).
    public func retrieveImage(
        with resource: any Resource, options: [MagpieOption] = [], progress: DownloadProgressHandler? = nil
    ) async throws -> RetrieveImageResult {
        try await retrieveImage(with: resource.convertToSource(), options: options, progress: progress)
    }

    /// The image for `source`, from the fastest layer that has it.
    ///
    /// - Throws: `MagpieError`: a request or response failure, `.cacheFailed(.notCached)` with
    ///   `onlyFromCache`, or a decoding failure of downloaded bytes.
    public func retrieveImage(
        with source: Source, options: [MagpieOption] = [], progress: DownloadProgressHandler? = nil
    ) async throws -> RetrieveImageResult {
        let options = MagpieParsedOptions(options)
        let cache = options.targetCache ?? self.cache
        let key = source.cacheKey
        let retrieval = ImageCacheRetrievalOptions(decodingOptions: options.decodingOptions, memoryOnly: options.cacheMemoryOnly)

        if options.revalidate, !options.forceRefresh, !options.onlyFromCache, case .network(let resource) = source,
            let result = try await revalidate(resource, key: key, cache: cache, options: options, retrieval: retrieval, progress: progress)
        {
            return result
        }
        if !options.forceRefresh {
            let cached = try await cache.retrieveImage(forKey: key, options: retrieval)
            if let image = cached.image {
                return RetrieveImageResult(image: image, cacheType: cached.cacheType, source: source, revalidated: false)
            }
        }
        if options.onlyFromCache { throw MagpieError.cacheFailed(reason: .notCached(key: key)) }
        return try await load(source, key: key, cache: cache, options: options, progress: progress)
    }

    /// A conditional request for a disk entry that has validators. Nil when there is nothing to
    /// revalidate (no entry, no validators, or the entry vanished after a 304): the caller goes on.
    private func revalidate(
        _ resource: any Resource, key: String, cache: ImageCache, options: MagpieParsedOptions,
        retrieval: ImageCacheRetrievalOptions, progress: DownloadProgressHandler?
    ) async throws -> RetrieveImageResult? {
        let diskKey = ImageCache.computedKey(key, processorIdentifier: "")
        guard let disk = cache.diskStorage,
            let stored = try disk.metadata(forKey: diskKey),
            stored.validators.etag != nil || stored.validators.lastModified != nil
        else { return nil }
        let downloader = options.downloader ?? self.downloader
        let fetched = try await downloader.downloadData(
            with: resource.downloadURL, options: options.downloadOptions(validators: stored.validators), progress: progress)
        guard fetched.notModified else {
            return try await store(fetched, source: .network(resource), key: key, cache: cache, options: options)
        }
        // A 304 may repeat or update the validators and freshness; keep what it does not repeat.
        var validators = stored.validators
        let fresh = fetched.response?.validators ?? .init()
        validators.etag = fresh.etag ?? validators.etag
        validators.lastModified = fresh.lastModified ?? validators.lastModified
        validators.maxAge = fresh.maxAge ?? validators.maxAge
        try disk.refresh(forKey: diskKey, validators: validators, expiration: options.diskCacheExpiration)
        let cached = try await cache.retrieveImage(forKey: key, options: retrieval)
        guard let image = cached.image else { return nil }
        return RetrieveImageResult(
            image: image, cacheType: cached.cacheType, source: .network(resource), revalidated: true, downloadMetrics: fetched.metrics)
    }

    /// Downloads (or reads from a provider), decodes and stores.
    private func load(
        _ source: Source, key: String, cache: ImageCache, options: MagpieParsedOptions, progress: DownloadProgressHandler?
    ) async throws -> RetrieveImageResult {
        switch source {
        case .network(let resource):
            let downloader = options.downloader ?? self.downloader
            let fetched = try await downloader.downloadData(with: resource.downloadURL, options: options.downloadOptions(), progress: progress)
            return try await store(fetched, source: source, key: key, cache: cache, options: options)
        case .provider(let provider):
            let data = try await provider.data()
            let image = try ImageCoderRegistry.shared.decode(data, options: options.decodingOptions)
            await cache.store(
                image, original: data, forKey: key, cacheSerializer: Self.originalBytes, toDisk: !options.cacheMemoryOnly,
                diskExpiration: options.diskCacheExpiration)
            return RetrieveImageResult(image: image, cacheType: .none, source: source, originalData: data, revalidated: false)
        }
    }

    /// Decodes downloaded bytes and stores them with the response's validators.
    private func store(
        _ fetched: ImageDataResult, source: Source, key: String, cache: ImageCache, options: MagpieParsedOptions
    ) async throws -> RetrieveImageResult {
        let image = try fetched.decodedImage(options: options.decodingOptions)
        await cache.store(
            image, original: fetched.data, forKey: key, cacheSerializer: Self.originalBytes, toDisk: !options.cacheMemoryOnly,
            diskExpiration: options.diskCacheExpiration, validators: fetched.response?.validators ?? .init())
        return RetrieveImageResult(
            image: image, cacheType: .none, source: source, originalData: fetched.data, revalidated: false, downloadMetrics: fetched.metrics)
    }
}
