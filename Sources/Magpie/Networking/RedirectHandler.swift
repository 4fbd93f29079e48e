import MagpieCore

/// Decides what to do with an HTTP redirect: follow it, follow a different request, or refuse
/// (the download fails with ``MagpieError/RequestFailureReason/redirectRefused(_:location:)``). Redirect count and
/// loops
/// are checked by the downloader whatever the handler says.
public protocol ImageDownloadRedirectHandler: Sendable {
    /// The request to send next, or nil to refuse.
    ///
    /// - Parameters:
    ///   - response: The redirect response (3xx status, with its `Location` header).
    ///   - newRequest: What the downloader would send: the `Location` resolved against the current URL;
    ///     `GET` after a 303 (and after a 301/302 of anything but `HEAD`), otherwise the same method; the same
    ///     headers, except that a redirect to another scheme, host or port keeps only `Accept`,
    ///     `Accept-Language` and `User-Agent`.
    /// - Returns: `newRequest`, a changed request, or nil to fail the download.
    func handleHTTPRedirection(response: HTTPResponseInfo, newRequest: ImageRequest) async -> ImageRequest?
}

/// A redirect handler from a closure.
public struct AnyRedirectHandler: ImageDownloadRedirectHandler {
    private let block: @Sendable (HTTPResponseInfo, ImageRequest) async -> ImageRequest?

    /// Wraps `handle`.
    ///
    /// - Parameter handle: Called with the redirect response and the proposed request; returns the request
    ///   to send, or nil to refuse the redirect.
    public init(_ handle: @escaping @Sendable (HTTPResponseInfo, ImageRequest) async -> ImageRequest?) {
        self.block = handle
    }

    /// Calls the wrapped closure with `response` and `newRequest`.
    public func handleHTTPRedirection(response: HTTPResponseInfo, newRequest: ImageRequest) async -> ImageRequest? {
        await block(response, newRequest)
    }
}
