#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Supplies image bytes that do not come from an HTTP download: a local file, base64 text,
/// a `data:` URL or bytes already in memory. The bytes are decoded and cached like downloaded ones.
public protocol ImageDataProvider: Sendable {
    /// The key of the image in the memory and disk caches.
    var cacheKey: String { get }
    /// The image's encoded bytes. Called only on a cache miss, at most once per retrieval.
    ///
    /// - Returns: The encoded image, not yet decoded.
    /// - Throws: ``MagpieError/requestFailed(reason:)``, normally with
    ///   ``MagpieError/RequestFailureReason/dataProviderFailed(cacheKey:message:)``.
    func data() async throws -> Data
    /// The URL the bytes stand for (the file or `data:` URL), if any; ``Source/url`` reports it. Defaults to nil.
    var contentURL: URL? { get }
}

extension ImageDataProvider {
    /// Nil: the bytes have no URL.
    public var contentURL: URL? { nil }
}
