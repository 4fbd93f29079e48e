#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decides what to do with an HTTP redirect: follow it, follow a different request, or refuse
/// (the download fails with `RequestFailureReason.redirectRefused`). Redirect count and loops
/// are checked by the downloader whatever the handler says.
public protocol ImageDownloadRedirectHandler: Sendable {
    /// The request to send next, or nil to refuse. `newRequest` is what the downloader would
    /// send (the `Location` resolved against the current URL, same headers, `GET`).
    func handleHTTPRedirection(response: HTTPResponseInfo, newRequest: ImageRequest) async -> ImageRequest?
}

/// A redirect handler from a closure.
public struct AnyRedirectHandler: ImageDownloadRedirectHandler {
    private let block: @Sendable (HTTPResponseInfo, ImageRequest) async -> ImageRequest?

    /// Wraps `handle`.
    public init(_ handle: @escaping @Sendable (HTTPResponseInfo, ImageRequest) async -> ImageRequest?) {
        self.block = handle
    }

    public func handleHTTPRedirection(response: HTTPResponseInfo, newRequest: ImageRequest) async -> ImageRequest? {
        await block(response, newRequest)
    }
}
