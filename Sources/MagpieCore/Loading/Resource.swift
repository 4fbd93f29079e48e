#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something to download: where the bytes are and the key they are cached under.
public protocol Resource: Sendable {
    /// The key of the image in the memory and disk caches.
    var cacheKey: String { get }
    /// Where the image's bytes are fetched from.
    var downloadURL: URL { get }
}

/// A URL with its own cache key, for when the URL alone is not a stable identity
/// (signed query strings, CDN variants of one image).
public struct ImageResource: Resource, Equatable, Hashable {
    /// The key of the image in the caches.
    public let cacheKey: String
    /// Where the image's bytes are fetched from.
    public let downloadURL: URL

    /// A resource for `downloadURL`, cached under `cacheKey` or, when nil, under `downloadURL.absoluteString`.
    ///
    /// - Parameters:
    ///   - downloadURL: Where the bytes are fetched from.
    ///   - cacheKey: The key in the caches; nil (the default) for the URL's absolute string.
    public init(downloadURL: URL, cacheKey: String? = nil) {
        self.downloadURL = downloadURL
        self.cacheKey = cacheKey ?? downloadURL.absoluteString
    }
}

/// A URL is a resource cached under its absolute string.
extension URL: Resource {
    /// The URL's `absoluteString`, so the same URL always hits the same cache entry.
    public var cacheKey: String { absoluteString }
    /// The URL itself (`self`).
    public var downloadURL: URL { self }
}
