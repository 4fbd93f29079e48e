#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an HTTP response said about its body's identity and freshness, kept with a cached entry so a
/// later request can revalidate it (`If-None-Match`, `If-Modified-Since`) or serve it while fresh.
///
/// Networking produces it (from response headers) and the data caches store it: it lives in the core so
/// neither side depends on the other.
public struct HTTPValidators: Sendable, Equatable, Hashable, Codable {
    /// The response's `ETag`.
    public var etag: String?
    /// The response's `Last-Modified`.
    public var lastModified: String?
    /// `Cache-Control: max-age`, in seconds; 0 for `no-cache` / `no-store`; nil when the response gave none.
    public var maxAge: TimeInterval?
    /// The response's `Content-Type`.
    public var contentType: String?

    /// Validators with the given values (all optional).
    ///
    /// - Parameters:
    ///   - etag: The `ETag` header, sent back as `If-None-Match`.
    ///   - lastModified: The `Last-Modified` header, sent back as `If-Modified-Since`.
    ///   - maxAge: Freshness lifetime in seconds.
    ///   - contentType: The `Content-Type` header.
    public init(etag: String? = nil, lastModified: String? = nil, maxAge: TimeInterval? = nil, contentType: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.contentType = contentType
    }

    /// True when a conditional request can be made with these (an `ETag` or a `Last-Modified`).
    public var canRevalidate: Bool { etag != nil || lastModified != nil }

    /// These validators updated by a `304 Not Modified`'s: what the 304 repeats or changes wins, what it
    /// leaves out is kept (RFC 9111 §4.3.4).
    ///
    /// - Parameter fresh: The validators of the 304 response.
    /// - Returns: The merged validators.
    public func merged(with fresh: HTTPValidators) -> HTTPValidators {
        var merged = self
        merged.etag = fresh.etag ?? etag
        merged.lastModified = fresh.lastModified ?? lastModified
        merged.maxAge = fresh.maxAge ?? maxAge
        return merged
    }
}
