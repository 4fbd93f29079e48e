#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which URLs and addresses a downloader may connect to: the guard against server-side request forgery (SSRF) for a
/// server that fetches URLs its clients name. Set it as ``ImageDownloader/Configuration/networkAccessPolicy``.
///
/// Every hop (the request and each redirect) is checked before it is sent: its URL must be `http`/`https` and start
/// with one of ``allowedSourcePrefixes`` (when there are any); its host is resolved (IP literals are taken as they
/// are) and internal addresses (loopback, private, link-local, CGNAT, multicast, unspecified, broadcast, reserved; see
/// ``IPAddress/Classification``) are dropped unless inside ``allowedNetworks``. The connection then goes to the
/// addresses left, the ones checked, never to a second DNS answer: the first, and the next one while connecting fails
/// (refused, unreachable, timed out). A refused hop fails with
/// ``MagpieError/RequestFailureReason/networkAccessRefused(_:reason:)``, whose reason names addresses: log it, do not
/// send it to the client.
public struct NetworkAccessPolicy: Sendable {
    /// Networks allowed even though internal, e.g. `IPNetwork("10.1.0.0/16")!` for an image store on the LAN.
    public var allowedNetworks: [IPNetwork]
    /// When not empty, every hop's URL must start with one of these, e.g. `https://images.example.com/`. A prefix
    /// that ends at the host or port matches only that whole host and port (`https://a.example` does not match
    /// `https://a.example.evil.net/` nor `https://a.example@evil.net/`); scheme and host compare case-insensitively.
    /// A hop whose path has a dot segment (``URLPath/hasDotSegment(_:)``: `..`, `%2e%2e`, `..%2f`) is refused.
    public var allowedSourcePrefixes: [String]
    /// Resolves host names; default ``SystemHostResolver``.
    public var resolver: any HostResolving
    /// How long a host's checked addresses are reused before it is resolved again; default 5 s, zero for every hop.
    public var resolutionLifetime: Duration
    /// Most host/address pairs with a connection pool of their own (pinning connections to a checked address needs a
    /// client per pair); the least recently used is closed, once its requests are done, to make room. Default 32.
    public var maximumPinnedClients: Int

    /// A policy that refuses internal addresses except `allowedNetworks`, and URLs outside `allowedSourcePrefixes`
    /// when there are any.
    public init(
        allowedNetworks: [IPNetwork] = [], allowedSourcePrefixes: [String] = [],
        resolver: any HostResolving = SystemHostResolver(), resolutionLifetime: Duration = .seconds(5),
        maximumPinnedClients: Int = 32
    ) {
        self.allowedNetworks = allowedNetworks
        self.allowedSourcePrefixes = allowedSourcePrefixes
        self.resolver = resolver
        self.resolutionLifetime = resolutionLifetime
        self.maximumPinnedClients = maximumPinnedClients
    }

    /// Whether a connection to `address` is allowed: a global address, or one inside ``allowedNetworks``.
    public func allows(_ address: IPAddress) -> Bool { refusal(of: address) == nil }

    /// Whether `url` may be requested, before its host is looked at: `http` or `https`, and within
    /// ``allowedSourcePrefixes`` when there are any.
    public func allowsSource(_ url: URL) -> Bool { refusal(ofSource: url) == nil }

    /// Why a connection to `address` is refused (`127.0.0.1 is loopback`); nil when it is allowed.
    func refusal(of address: IPAddress) -> String? {
        let classification = address.classification
        if classification == .global || allowedNetworks.contains(where: { $0.contains(address) }) { return nil }
        return "\(address) is \(classification)"
    }

    /// Why `url` is refused before resolving; nil when it may go on.
    func refusal(ofSource url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "only http and https URLs are allowed"
        }
        guard !allowedSourcePrefixes.isEmpty else { return nil }
        // A prefix says nothing about a path an origin resolves above it (`/img/../secret.jpg`): such hops, a redirect's
        // among them, are refused rather than compared.
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        if URLPath.hasDotSegment(path) { return "the URL's path has a dot segment" }
        guard allowedSourcePrefixes.contains(where: { Self.url(url.absoluteString, startsWith: $0) })
        else { return "the URL is outside the allowed sources" }
        return nil
    }

    /// Whether `text` starts with `prefix`, where a prefix ending inside `scheme://authority` must cover the whole
    /// authority (the next character of `text` ends it), and the authority compares case-insensitively.
    static func url(_ text: String, startsWith prefix: String) -> Bool {
        let text = Array(text.utf8), prefix = Array(prefix.utf8)
        let separator = Array("://".utf8)
        guard let start = prefix.indices.first(where: { prefix[$0...].starts(with: separator) }) else {
            return text.starts(with: prefix)
        }
        let ends: Set<UInt8> = [UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")]
        let authorityEnd = prefix[(start + separator.count)...].firstIndex(where: ends.contains) ?? prefix.endIndex
        func lowered(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
        guard text.count >= authorityEnd,
            text[..<authorityEnd].map(lowered) == prefix[..<authorityEnd].map(lowered)
        else { return false }
        guard authorityEnd < prefix.endIndex else {
            return text.count == authorityEnd || ends.contains(text[authorityEnd])
        }
        return text[authorityEnd...].starts(with: prefix[authorityEnd...])
    }
}
