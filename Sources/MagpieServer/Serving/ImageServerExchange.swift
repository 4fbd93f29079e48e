import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ``ImageServer`` needs of an HTTP request, independent of the HTTP framework.
public struct ImageServerRequest: Sendable {
    /// `GET` or `HEAD` (others are answered 405).
    public var method: String
    /// The path as received, percent-encoding intact, without the query string: what the signature covers.
    public var path: String
    /// The `Accept` header, for `format:auto`.
    public var accept: String?
    /// The `If-None-Match` header.
    public var ifNoneMatch: String?
    /// The `If-Modified-Since` header.
    public var ifModifiedSince: String?

    /// A request with the given parts.
    public init(method: String, path: String, accept: String? = nil, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil) {
        self.method = method
        self.path = path
        self.accept = accept
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
    }
}

/// What ``ImageServer`` answers: status, headers and body (empty for `HEAD` and 304, whose `Content-Length` still
/// says what a `GET` would send).
public struct ImageServerResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Header fields in order.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Data
    /// Where the image came from: `memory`, `disk`, `original` (made from cached source bytes), `none` (downloaded),
    /// or `-` for errors; the access log and the `X-Magpie-Cache` header carry it.
    public var cacheLayer: String

    /// The value of the first header field called `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
