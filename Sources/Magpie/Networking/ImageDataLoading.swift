import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The loader port: the bytes of a ``Source``, asked for with an ``ImageDataRequest`` (progress, HTTP validators in
/// for a conditional request) and handed back with the response's validators (to cache). ``ImageDownloader`` implements it over HTTP(S) and the data
/// providers; ``DataProviderLoader`` implements it with the providers alone (no network). An
/// ``ImageManager`` takes any loader: a loader of your own (an object store's SDK, a signed-URL
/// fetcher, a scripted one in tests) is one type that conforms.
///
/// The manager puts the caches, the failed-URL list, decoding and processing around it; a loader
/// only fetches. It should share one fetch among concurrent callers of the same source where it can
/// (``SharedWork`` does that), honour cancellation, and answer a conditional request whose
/// validators still match with a result whose ``ImageDataResult/notModified`` is true and no data.
public protocol ImageDataLoading: Sendable {
    /// The bytes of `request.source`.
    ///
    /// - Parameter request: The source, and how to fetch it: priority, timeout, modifier, redirect handler, retry
    ///   strategy, a spool folder, progress and, for a conditional load, ``ImageDataRequest/validators``.
    /// - Returns: The bytes with the response (and its validators) they came with, or a `notModified` result.
    /// - Throws: A ``MagpieError`` (``MagpieError/requestFailed(reason:)``, ``MagpieError/responseFailed(reason:)``);
    ///   a provider's own error is turned into one by the manager.
    func loadImageData(_ request: ImageDataRequest) async throws -> ImageDataResult

    /// The headers a load of `request` would send (after modifiers, with the loader's defaults): what a cached
    /// response's `Vary` is matched against before it is served. The default, for loaders without HTTP, is none.
    ///
    /// - Parameter request: The request a load would get (its source and request modifier matter).
    func requestHeaders(for request: ImageDataRequest) async throws -> [HTTPHeaderField]
}

extension ImageDataLoading {
    /// No headers: a loader without HTTP.
    public func requestHeaders(for request: ImageDataRequest) async throws -> [HTTPHeaderField] { [] }
}

extension ImageDownloader: ImageDataLoading {
    /// Downloads a network source (``downloadData(with:options:progress:)`` with the request mapped to
    /// ``ImageDownloadOptions``, shared with concurrent callers of the same request) or reads a provider source. With a
    /// ``Configuration/networkAccessPolicy``, a provider that reads a `file:` or `data:` URL is refused
    /// (``MagpieError/RequestFailureReason/networkAccessRefused(_:reason:)``).
    public func loadImageData(_ request: ImageDataRequest) async throws -> ImageDataResult {
        switch request.source {
        case .network(let resource):
            return try await downloadData(with: resource.downloadURL, options: ImageDownloadOptions(request), progress: request.progress)
        case .provider(let provider):
            // `URL.convertToSource()` turns `file:` and `data:` URLs into providers before they get here.
            if networkGuard != nil, let url = provider.contentURL, !["http", "https"].contains(url.scheme?.lowercased() ?? "") {
                throw MagpieError.requestFailed(reason: .networkAccessRefused(url, reason: "only http and https URLs are allowed"))
            }
            return try await DataProviderLoader.provide(provider)
        }
    }

    /// The modified request's headers with the `User-Agent` and `Accept` the downloader adds.
    public func requestHeaders(for request: ImageDataRequest) async throws -> [HTTPHeaderField] {
        guard case .network(let resource) = request.source else { return [] }
        return try await sentHeaders(url: resource.downloadURL, options: ImageDownloadOptions(request))
    }
}

/// A loader with no network: provider sources give their bytes, and network resources with `file:` or
/// `data:` URLs are read through the matching provider; anything else fails with
/// ``MagpieError/RequestFailureReason/unsupportedScheme(_:)``.
public struct DataProviderLoader: ImageDataLoading {
    /// A loader.
    public init() {}

    /// The provider's bytes; a `file:` or `data:` URL read directly. The request's network settings do not apply.
    public func loadImageData(_ request: ImageDataRequest) async throws -> ImageDataResult {
        switch request.source {
        case .provider(let provider): return try await Self.provide(provider)
        case .network(let resource):
            guard case .provider(let provider) = resource.convertToSource() else {
                throw MagpieError.requestFailed(reason: .unsupportedScheme(resource.downloadURL))
            }
            return try await Self.provide(provider)
        }
    }

    /// What a provider gives, as a loader's result (no response; the provider's content URL, or a
    /// `magpie-provider:` URL naming its cache key).
    static func provide(_ provider: any ImageDataProvider) async throws -> ImageDataResult {
        let data = try await provider.data()
        let url = provider.contentURL ?? Source.providerURL(cacheKey: provider.cacheKey)
        return ImageDataResult(data: data, url: url, response: nil, notModified: false, metrics: DownloadMetrics())
    }
}
