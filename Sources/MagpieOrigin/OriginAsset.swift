/// One resource the origin serves: the body bytes plus the metadata that goes into its response headers.
///
/// The origin knows nothing about images; callers decide what the bytes are.
public struct OriginAsset: Sendable {
    /// The `Last-Modified` value used when none is given: a fixed date, so revalidation tests are deterministic.
    public static let defaultLastModified = "Wed, 21 Oct 2015 07:28:00 GMT"

    /// The body bytes. Immutable so the default ETag can never go stale; build a new asset to change them.
    public let bytes: [UInt8]
    /// The `Content-Type` header value, e.g. `image/png`.
    public var contentType: String
    /// The `Last-Modified` header value (an HTTP date such as `Wed, 21 Oct 2015 07:28:00 GMT`); `nil` omits the header.
    public var lastModified: String?
    /// The `ETag` header value including its quotes, e.g. `"abc"`; `nil` omits the header.
    public var etag: String?
    /// The `Cache-Control: max-age` value in seconds; `nil` omits the header.
    public var maxAge: Int?
    /// More response headers, sent with 200 and 304 answers (`Cache-Control` here replaces the one ``maxAge`` makes):
    /// `Expires`, `Age`, `Vary`… for HTTP caching tests. Empty by default.
    public var headers: [String: String] = [:]
    /// When set, every request for the asset is answered with this status (and a small HTML page) instead: an origin
    /// that started failing. Nil by default.
    public var failureStatus: Int?
    /// When set, a full (200) response declares the whole asset but sends only this many bytes, then closes the
    /// connection: a download cut short, to be resumed. Nil by default.
    public var cutAfter: Int?

    /// Creates an asset.
    /// - Parameters:
    ///   - bytes: The body, e.g. a `[UInt8]` or a `Data`.
    ///   - contentType: The `Content-Type` header value.
    ///   - lastModified: The `Last-Modified` header value (default ``defaultLastModified``); `nil` omits the header.
    ///   - etag: The `ETag` header value with quotes; `nil` computes a strong ETag from a hash of the bytes.
    ///   - maxAge: The `Cache-Control: max-age` seconds; `nil` omits the header.
    public init(
        bytes: some Sequence<UInt8>,
        contentType: String,
        lastModified: String? = OriginAsset.defaultLastModified,
        etag: String? = nil,
        maxAge: Int? = nil
    ) {
        let bytes = Array(bytes)
        self.bytes = bytes
        self.contentType = contentType
        self.lastModified = lastModified
        self.etag = etag ?? Self.strongETag(for: bytes)
        self.maxAge = maxAge
    }

    /// A strong ETag derived from the bytes: `"<FNV-1a 64-bit hex>-<length hex>"`.
    ///
    /// - Parameter bytes: The body.
    /// - Returns: The ETag with its quotes, the same for the same bytes in every run.
    ///
    /// FNV-1a keeps this module free of a crypto dependency; collisions only matter to tests that serve
    /// different bytes under one name, and the length suffix makes even those unlikely.
    public static func strongETag(for bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return "\"\(String(hash, radix: 16))-\(String(bytes.count, radix: 16))\""
    }
}
