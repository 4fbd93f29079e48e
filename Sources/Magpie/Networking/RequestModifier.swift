import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request as Magpie is about to send it: URL, method and headers.
/// A modifier may change any of them; the changed request is also the dedupe key.
public struct ImageRequest: Sendable, Equatable {
    /// Where to send it. Only `http` and `https` go to the network.
    public var url: URL
    /// The HTTP method; `GET` unless a modifier changes it.
    public var method: String
    /// Header lines sent with the request (Magpie adds `User-Agent`, `Accept` and conditional headers).
    public var headers: [HTTPHeaderField]

    /// A request for `url`; by default a `GET` with no extra headers.
    ///
    /// - Parameters:
    ///   - url: Where to send it.
    ///   - method: The HTTP method (default `GET`).
    ///   - headers: Header lines to send, in order.
    public init(url: URL, method: String = "GET", headers: [HTTPHeaderField] = []) {
        self.url = url
        self.method = method
        self.headers = headers
    }

    /// Sets `name` to `value`, replacing any earlier lines of that name (case-insensitive).
    ///
    /// - Parameters:
    ///   - value: The header's value.
    ///   - name: The header's name; the new line is appended at the end.
    public mutating func setValue(_ value: String, forHeader name: String) {
        headers.removeAll { $0.name.equalsIgnoringASCIICase(name) }
        headers.append(HTTPHeaderField(name: name, value: value))
    }

    /// The first value of header `name` (case-insensitive).
    ///
    /// - Parameter name: A header name such as `Authorization`.
    /// - Returns: The value, or nil when the request has no such header.
    public func value(forHeader name: String) -> String? {
        headers.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    // MARK: URLRequest's names, so Kingfisher modifiers read the same

    /// Sets header `field` to `value` (replacing earlier lines of that name, case-insensitive); nil removes it.
    /// `URLRequest`'s name for ``setValue(_:forHeader:)``.
    ///
    /// - Parameters:
    ///   - value: The header's value, or nil to remove the header.
    ///   - field: The header's name, such as `Authorization`.
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {
        if let value {
            setValue(value, forHeader: field)
        } else {
            headers.removeAll { $0.name.equalsIgnoringASCIICase(field) }
        }
    }

    /// Appends a line `field: value`, keeping earlier lines of that name (`URLRequest.addValue`).
    ///
    /// - Parameters:
    ///   - value: The header's value.
    ///   - field: The header's name.
    public mutating func addValue(_ value: String, forHTTPHeaderField field: String) {
        headers.append(HTTPHeaderField(name: field, value: value))
    }

    /// The first value of header `field` (case-insensitive); `URLRequest`'s name for ``value(forHeader:)``.
    ///
    /// - Parameter field: A header name.
    /// - Returns: The value, or nil when the request has no such header.
    public func value(forHTTPHeaderField field: String) -> String? { value(forHeader: field) }

    /// The headers by name (later lines of a repeated name win), as `URLRequest.allHTTPHeaderFields`.
    public var allHTTPHeaderFields: [String: String] {
        Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The method, as `URLRequest.httpMethod`.
    public var httpMethod: String {
        get { method }
        set { method = newValue }
    }

    /// Text that is equal for requests that may share one HTTP exchange.
    var dedupeKey: String {
        let lines = headers.map { "\($0.name.lowercased()):\($0.value)" }.sorted()
        return method + " " + url.absoluteString + "\n" + lines.joined(separator: "\n")
    }
}

/// Changes a request before it is sent: adds an auth header, rewrites the URL, or cancels it by returning nil
/// (the download then fails with ``MagpieError/RequestFailureReason/cancelledByModifier(_:)``).
///
/// Runs once per download, before anything is sent: retries resend the modified request, and
/// redirects are shaped by an ``ImageDownloadRedirectHandler`` instead. The downloader's configured
/// modifier runs first, then the one passed for the request.
public protocol ImageDownloadRequestModifier: Sendable {
    /// The request to send instead of `request`, or nil to not send anything.
    ///
    /// - Parameter request: The request as Magpie would send it.
    /// - Returns: The request to send (possibly `request` unchanged), or nil to cancel the download.
    func modified(for request: ImageRequest) async -> ImageRequest?
}

/// A request modifier from a synchronous closure.
public struct AnyModifier: ImageDownloadRequestModifier {
    private let block: @Sendable (ImageRequest) -> ImageRequest?

    /// Wraps `modify`.
    ///
    /// - Parameter modify: Returns the request to send, or nil to cancel it.
    public init(_ modify: @escaping @Sendable (ImageRequest) -> ImageRequest?) {
        self.block = modify
    }

    /// Calls the wrapped closure with `request`.
    public func modified(for request: ImageRequest) async -> ImageRequest? { block(request) }
}

/// A request modifier from an async closure (for example one that fetches a fresh token).
public struct AsyncAnyModifier: ImageDownloadRequestModifier {
    private let block: @Sendable (ImageRequest) async -> ImageRequest?

    /// Wraps `modify`.
    ///
    /// - Parameter modify: Returns the request to send, or nil to cancel it; the download waits for it.
    public init(_ modify: @escaping @Sendable (ImageRequest) async -> ImageRequest?) {
        self.block = modify
    }

    /// Calls the wrapped closure with `request` and waits for it.
    public func modified(for request: ImageRequest) async -> ImageRequest? { await block(request) }
}
