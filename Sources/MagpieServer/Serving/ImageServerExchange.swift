import Magpie
import Synchronization
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
    /// The peer's address (`127.0.0.1`, `::1`), for the access log; nil when unknown.
    public var clientAddress: String?
    /// The `User-Agent` header, for the access log.
    public var userAgent: String?
    /// The `Referer` header, for the combined access log.
    public var referer: String?
    /// The request's id: the client's `X-Request-ID` when usable (``acceptedRequestID(_:)``), else a new one. The
    /// response carries it back and the access log shows it.
    public var requestID: String?

    /// A request with the given parts.
    public init(
        method: String, path: String, accept: String? = nil, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil,
        clientAddress: String? = nil, userAgent: String? = nil, referer: String? = nil, requestID: String? = nil
    ) {
        self.method = method
        self.path = path
        self.accept = accept
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.clientAddress = clientAddress
        self.userAgent = userAgent
        self.referer = referer
        self.requestID = requestID
    }

    /// The id for a request whose `X-Request-ID` header is `header`: the header when it is 1 to 128 characters of
    /// letters, digits and `-_.:/+=@` (so it can go into a log line and a response header as it is), else 16 new hex
    /// digits: this process's random prefix and a counter, unique without a system call per request.
    public static func acceptedRequestID(_ header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 128, header.utf8.allSatisfy(isIDByte) { return header }
        let number = issuedIDs.add(1, ordering: .relaxed).newValue
        return processIDPrefix + UInt32(truncatingIfNeeded: number).hexDigits
    }

    /// 8 random hex digits chosen once: ids from several instances behind one balancer do not collide.
    private static let processIDPrefix = UInt32.random(in: .min ... .max).hexDigits
    private static let issuedIDs = Atomic<UInt64>(0)

    private static func isIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "-_.:/+=@".utf8.contains(byte)
        }
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
