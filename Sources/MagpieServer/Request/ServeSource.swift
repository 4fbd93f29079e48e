import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the image of a request comes from.
public enum ServeSource: Sendable, Equatable {
    /// An `http` or `https` URL, normalised: scheme and host in lowercase, no default port, no fragment, an empty
    /// path written `/`, `.` and `..` segments resolved (``URLPath/removingDotSegments(_:)``). Never carries user info
    /// nor a dot segment behind an encoded separator. Whether the server may fetch it is the source policy's decision.
    case remote(URL)
    /// A file under the server's local root, from a `local:///path` URL: the percent-decoded path, starting with `/`,
    /// relative to that root. Its segments are never empty, `.` or `..` and it contains no NUL; resolving symbolic
    /// links safely is the server's job.
    case local(path: String)

    /// A text naming the source the same way across runs and processes, for cache keys: the normalised URL for
    /// ``remote(_:)``, `local://` followed by the path for ``local(path:)``.
    public var cacheIdentity: String {
        switch self {
        case .remote(let url): url.absoluteString
        case .local(let path): "local://" + path
        }
    }

    /// The source a decoded source URL names.
    ///
    /// - Throws: A 400 ``ServeRequestError`` for another scheme, a URL without a host, with user info or with
    ///   control characters, and for local paths with `..` and other unusable segments.
    static func parse(_ text: String) throws(ServeRequestError) -> ServeSource {
        guard !text.isEmpty else { throw .badRequest("empty source URL") }
        let quoted = ServeRequestError.quoted(text)
        // A CR or LF in a URL handed to a fetcher is the start of header injection; nothing legitimate needs them.
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .badRequest("source URL \(quoted) contains control characters")
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw .badRequest("source URL \(quoted) has no scheme (http, https or local)")
        }
        switch text[..<colon].lowercased() {
        case "http", "https": return try remote(text, quoted: quoted)
        case "local": return try local(text[text.index(after: colon)...], quoted: quoted)
        default:
            throw .badRequest("source URL scheme \(ServeRequestError.quoted(text[..<colon])) is not allowed (http, https or local)")
        }
    }

    private static func remote(_ text: String, quoted: String) throws(ServeRequestError) -> ServeSource {
        guard let url = URL(string: text), var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let host = components.percentEncodedHost, !host.isEmpty
        else { throw .badRequest("source URL \(quoted) has no valid host") }
        guard Self.isPlausibleHost(host) else { throw .badRequest("source URL \(quoted) has no valid host") }
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else {
            // Signed URLs are public (every browser that shows the image sees them), so credentials in them leak.
            throw .badRequest("source URL \(quoted) has user info, which is not allowed")
        }
        let scheme = components.scheme?.lowercased()
        components.scheme = scheme
        components.percentEncodedHost = host.lowercased()
        if components.port == (scheme == "https" ? 443 : 80) { components.port = nil }
        components.fragment = nil
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        // Resolved here, so the prefix check and the origin see the same path: `/img/../secret.jpg` is `/secret.jpg`.
        components.percentEncodedPath = URLPath.removingDotSegments(components.percentEncodedPath)
        guard !URLPath.hasDotSegment(components.percentEncodedPath) else {
            throw .badRequest("source URL \(quoted) hides a dot segment behind an encoded separator (%2F, %5C or \\)")
        }
        guard let normalized = components.url else { throw .badRequest("source URL \(quoted) is not a valid URL") }
        return .remote(normalized)
    }

    /// A registered name (letters, digits, `-`, `.`, `_`) or a bracketed IPv6 literal; Foundation percent-encodes
    /// anything else (a space, a `%`), which no resolver would take.
    private static func isPlausibleHost(_ host: String) -> Bool {
        if host.hasPrefix("[") {
            return host.hasSuffix("]") && host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        return host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_") }
    }

    /// `rest` is what follows `local:`; it must be `//` (an empty host) and an absolute path.
    private static func local(_ rest: Substring, quoted: String) throws(ServeRequestError) -> ServeSource {
        guard rest.hasPrefix("///") else { throw .badRequest("local source \(quoted) must start with local:/// (no host)") }
        let encoded = rest.dropFirst(2)
        guard !encoded.contains("?"), !encoded.contains("#") else {
            throw .badRequest("local source \(quoted) has a query or fragment")
        }
        // Decoded before the checks, so `%2E%2E` is caught as `..` too.
        guard let path = PercentDecoding.strict(encoded) else {
            throw .badRequest("local source \(quoted) has an invalid percent escape or is not UTF-8")
        }
        guard !path.contains("\0") else { throw .badRequest("local source \(quoted) contains NUL") }
        let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains("..") { throw .badRequest("local source \(quoted) has a \"..\" segment") }
        if segments.contains(where: { $0.isEmpty || $0 == "." }) {
            throw .badRequest("local source \(quoted) has an empty or \".\" segment (or names a folder)")
        }
        return .local(path: path)
    }
}
