#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MagpieError {
    /// Why a download could not be made or could not finish. Every case names the URL.
    public enum RequestFailureReason: Sendable, Equatable {
        /// The text is not a URL Magpie can request.
        case invalidURL(String)
        /// The URL's scheme is not `http`, `https`, `file` or `data`.
        case unsupportedScheme(URL)
        /// The request modifier returned nil.
        case cancelledByModifier(URL)
        /// The caller cancelled (task cancellation or ``DownloadTask/cancel()``).
        case cancelled(URL)
        /// No complete response within `timeout` (the whole exchange, body included), or no connection within the
        /// connect timeout (``ImageDownloader/Configuration/connectTimeout``).
        case timedOut(URL, timeout: Duration)
        /// The connection could not be made or broke before the response was complete.
        case connectionFailed(URL, message: String)
        /// The TLS handshake failed (certificate not trusted, wrong host, protocol).
        case tlsFailed(URL, message: String)
        /// More redirects than ``ImageDownloader/Configuration/maximumRedirects``; `chain` lists the URLs visited.
        case tooManyRedirects(URL, chain: [URL])
        /// A redirect points back to a URL already visited.
        case redirectLoop(URL, chain: [URL])
        /// The redirect handler refused to follow `location`, or `location` is not an `http`/`https` URL.
        case redirectRefused(URL, location: URL)
        /// The downloader's network access policy refused the URL (the request's, or a redirect's target) before
        /// anything was sent: an internal address, a URL outside the allowed sources, or not `http`/`https`. `reason`
        /// is for logs (`127.0.0.1 is loopback`); it names addresses, so do not show it to whoever chose the URL.
        case networkAccessRefused(URL, reason: String)
        /// A large body could not be written to its spool folder as it arrived, or mapped back from it: a local disk
        /// problem (full, unwritable), not the server's. `path` is the folder or file, `message` the system's reason.
        case spoolFailed(URL, path: String, message: String)
        /// An ``ImageDataProvider`` (local file, base64, raw data) failed; `message` says why.
        case dataProviderFailed(cacheKey: String, message: String)
        /// Refused before it was sent: the URL is on the manager's failed-URL list; `previous` is the error it failed
        /// with then (its ``MagpieError/statusCode`` included). Pass ``MagpieOption/retryFailed`` to try it anyway, or
        /// wait for the entry to expire.
        indirect case recentlyFailed(URL, previous: MagpieError)
    }

    /// Why a server's answer is not a usable image. Every case carries the response (URL, status, headers).
    public enum ResponseFailureReason: Sendable, Equatable {
        /// The status code is not in ``ImageDownloader/Configuration/acceptableStatusCodes`` (404, 500, ...).
        case badStatus(HTTPResponseInfo)
        /// The body is not an image: neither the content type nor the bytes say so.
        /// `sniffed` is what the leading bytes look like (`.unknown` for HTML or text).
        case notAnImage(HTTPResponseInfo, sniffed: ImageFormat)
        /// The body is, or declares to be, larger than `limit` bytes
        /// (``ImageDownloader/Configuration/maximumResponseSize``). `declared` is the Content-Length when given.
        case tooLarge(HTTPResponseInfo, limit: Int, declared: Int?)
        /// The body ended before its Content-Length.
        case truncated(HTTPResponseInfo, expected: Int, received: Int)
        /// The server answered with an acceptable status but no body bytes.
        case emptyBody(HTTPResponseInfo)
        /// The body looked like an image but did not decode; `reason` is the decoder's.
        case undecodable(HTTPResponseInfo, reason: DecodingFailureReason)
    }

    /// The URL this failure is about, when it is a network failure: the request's URL, or for response
    /// failures the URL that answered. Nil for other errors, invalid URLs and data providers.
    public var url: URL? {
        switch self {
        case .requestFailed(let reason): reason.url
        case .responseFailed(let reason): reason.response.url
        default: nil
        }
    }

    /// The HTTP status code of the failing response, for ``MagpieError/responseFailed(reason:)`` and for a
    /// ``MagpieError/RequestFailureReason/recentlyFailed(_:previous:)`` whose remembered failure had one; nil otherwise.
    public var statusCode: Int? {
        switch self {
        case .responseFailed(let reason): reason.response.statusCode
        case .requestFailed(reason: .recentlyFailed(_, let previous)): previous.statusCode
        default: nil
        }
    }

    /// True for failures that may go away if the same request is made again later:
    /// timeouts, connection failures, truncated bodies, 5xx, 408 and 429. Never for other 4xx, bad content or
    /// cancellation. ``DelayRetryStrategy`` retries exactly these.
    public var isTransient: Bool {
        switch self {
        case .requestFailed(reason: .timedOut), .requestFailed(reason: .connectionFailed): true
        case .responseFailed(reason: .truncated): true
        case .responseFailed(reason: .badStatus(let response)):
            response.statusCode >= 500 || response.statusCode == 429 || response.statusCode == 408
        default: false
        }
    }

    /// True when the caller cancelled (``MagpieError/RequestFailureReason/cancelled(_:)``); not for a modifier's
    /// cancel.
    public var isCancellation: Bool {
        switch self {
        case .requestFailed(reason: .cancelled), .processingFailed(reason: .cancelled): true
        default: false
        }
    }
}

extension MagpieError.RequestFailureReason: CustomStringConvertible {
    /// The URL the request was for; nil for ``invalidURL(_:)`` and ``dataProviderFailed(cacheKey:message:)``.
    public var url: URL? {
        switch self {
        case .invalidURL, .dataProviderFailed: nil
        case .unsupportedScheme(let url), .cancelledByModifier(let url), .cancelled(let url),
            .timedOut(let url, _), .connectionFailed(let url, _), .tlsFailed(let url, _),
            .tooManyRedirects(let url, _), .redirectLoop(let url, _), .redirectRefused(let url, _),
            .networkAccessRefused(let url, _), .spoolFailed(let url, _, _), .recentlyFailed(let url, _):
            url
        }
    }

    /// A short phrase naming what failed and the URL; ``MagpieError/description`` puts it after `request failed:`.
    public var description: String {
        switch self {
        case .invalidURL(let text): "invalid URL \"\(text)\""
        case .unsupportedScheme(let url): "unsupported scheme \"\(url.scheme ?? "")\" in \(url.absoluteString)"
        case .cancelledByModifier(let url): "the request modifier cancelled \(url.absoluteString)"
        case .cancelled(let url): "cancelled: \(url.absoluteString)"
        case .timedOut(let url, let timeout): "timed out after \(timeout): \(url.absoluteString)"
        case .connectionFailed(let url, let message): "\(message) for \(url.absoluteString)"
        case .tlsFailed(let url, let message): "TLS failed for \(url.absoluteString): \(message)"
        case .tooManyRedirects(let url, let chain): "too many redirects (\(chain.count - 1)) from \(url.absoluteString)"
        case .redirectLoop(let url, let chain):
            // The chain starts at the URL and may end there again: name it once.
            "redirect loop from \(url.absoluteString): "
                + chain.dropFirst().map { $0 == url ? "back to it" : $0.absoluteString }.joined(separator: " -> ")
        case .redirectRefused(let url, let location): "redirect from \(url.absoluteString) to \(location.absoluteString) refused"
        case .networkAccessRefused(let url, let reason): "network access to \(url.absoluteString) refused: \(reason)"
        case .spoolFailed(let url, let path, let message): "cannot spool the body of \(url.absoluteString) to \(path): \(message)"
        case .dataProviderFailed(let key, let message):
            Self.names(message, key) ? message : "data provider \(key) failed: \(message)"
        case .recentlyFailed(_, let previous): "failed recently, not retried: \(previous)"
        }
    }
}

extension MagpieError.RequestFailureReason {
    /// Whether `message` already names `key` (a data provider's cache key) or, for a `file:` key, its path:
    /// a local file's messages name the path, which the description should not repeat.
    private static func names(_ message: String, _ key: String) -> Bool {
        if message.contains(key) { return true }
        guard let url = URL(string: key), url.isFileURL, !url.path.isEmpty else { return false }
        return message.contains(url.path)
    }
}

extension MagpieError.ResponseFailureReason: CustomStringConvertible {
    /// The response this failure is about (URL, status, headers).
    public var response: HTTPResponseInfo {
        switch self {
        case .badStatus(let response), .notAnImage(let response, _), .tooLarge(let response, _, _),
            .truncated(let response, _, _), .emptyBody(let response), .undecodable(let response, _):
            response
        }
    }

    /// A short phrase naming the problem and the URL; ``MagpieError/description`` puts it after `bad response:`.
    public var description: String {
        let url = response.url.absoluteString
        switch self {
        case .badStatus(let response): return "HTTP \(response.statusCode) from \(url)"
        case .notAnImage(let response, let sniffed):
            let type = response.contentType ?? "no content type"
            let bytes = sniffed == .unknown ? "the bytes are not a known image format" : "the bytes look like \(sniffed)"
            return "not an image (\(type); \(bytes)) from \(url)"
        case .tooLarge(_, let limit, let declared):
            return "response larger than \(limit) bytes" + (declared.map { " (Content-Length \($0))" } ?? "") + " from \(url)"
        case .truncated(_, let expected, let received): return "body truncated at \(received) of \(expected) bytes from \(url)"
        case .emptyBody: return "empty body from \(url)"
        case .undecodable(_, let reason): return "\(reason) from \(url)"
        }
    }
}
