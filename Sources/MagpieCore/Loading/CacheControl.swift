/// The directives of a `Cache-Control` header (RFC 9111 §5.2.2) that a private cache acts on.
///
/// Parsing is lenient where the RFC allows and cautious where it asks: names are case-insensitive, values may be
/// quoted, the first occurrence of a directive wins, a `max-age` that is not a number makes the response stale, and
/// numbers too large to represent become 2^31 seconds.
public struct CacheControl: Sendable, Equatable, Hashable {
    /// `max-age`, in seconds.
    public var maxAge: Int?
    /// `s-maxage`, in seconds: parsed, but a private cache such as Magpie's ignores it.
    public var sharedMaxAge: Int?
    /// `no-store`: the response is never written to a cache.
    public var noStore = false
    /// `no-cache` (with or without field names): stored, but revalidated before every use.
    public var noCache = false
    /// `must-revalidate`: once stale, never served without a successful revalidation.
    public var mustRevalidate = false
    /// `proxy-revalidate`: treated as `must-revalidate`.
    public var proxyRevalidate = false
    /// `immutable` (RFC 8246): no revalidation while fresh.
    public var immutable = false
    /// `private`.
    public var isPrivate = false
    /// `public`.
    public var isPublic = false
    /// `stale-while-revalidate` (RFC 5861), in seconds.
    public var staleWhileRevalidate: Int?
    /// `stale-if-error` (RFC 5861), in seconds.
    public var staleIfError: Int?

    /// The largest delta-seconds value kept (RFC 9111 §1.2.2).
    public static let maximumDeltaSeconds = 2_147_483_648

    /// No directives.
    public init() {}

    /// The directives of a header value; nil or empty gives none. Several header lines may be passed joined by commas.
    ///
    /// - Parameter header: The `Cache-Control` value.
    public init(parsing header: String?) {
        guard let header else { return }
        var seen = Set<String>()
        for (name, value) in Self.directives(header) where seen.insert(name).inserted {
            switch name {
            // An unparsable max-age must not make a response fresh: it counts as zero.
            case "max-age": maxAge = Self.deltaSeconds(value) ?? 0
            case "s-maxage": sharedMaxAge = Self.deltaSeconds(value) ?? 0
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            case "proxy-revalidate": proxyRevalidate = true
            case "immutable": immutable = true
            case "private": isPrivate = true
            case "public": isPublic = true
            case "stale-while-revalidate": staleWhileRevalidate = Self.deltaSeconds(value)
            case "stale-if-error": staleIfError = Self.deltaSeconds(value)
            default: break
            }
        }
    }

    /// True when a stale response may never be served without revalidation (`must-revalidate`, `proxy-revalidate`,
    /// `no-cache`).
    public var forbidsServingStale: Bool { mustRevalidate || proxyRevalidate || noCache }

    /// `name[=value]` pairs, names lowercased, quotes removed, commas inside quotes kept.
    static func directives(_ header: String) -> [(String, String?)] {
        var result: [(String, String?)] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        func finish() {
            let text = current.trimmingASCIIWhitespace
            current = ""
            guard !text.isEmpty else { return }
            guard let equals = text.firstIndex(of: "=") else {
                result.append((text.lowercased(), nil))
                return
            }
            let name = text[..<equals].trimmingASCIIWhitespace.lowercased()
            var value = text[text.index(after: equals)...].trimmingASCIIWhitespace
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                var unquoted = ""
                var escaping = false
                for character in value.dropFirst().dropLast() {
                    if !escaping, character == "\\" { escaping = true; continue }
                    escaping = false
                    unquoted.append(character)
                }
                value = unquoted
            }
            result.append((name, value))
        }
        for character in header {
            if escaped {
                escaped = false
            } else if inQuotes, character == "\\" {
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == ",", !inQuotes {
                finish()
                continue
            }
            current.append(character)
        }
        finish()
        return result
    }

    /// A delta-seconds value: digits only; too large becomes ``maximumDeltaSeconds``; anything else nil.
    static func deltaSeconds(_ text: String?) -> Int? {
        guard let text, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        // Leading zeros say nothing about the size: "00000000060" is 60.
        let digits = text.drop { $0 == "0" }
        guard digits.utf8.count <= 10, let value = Int(digits.isEmpty ? "0" : digits) else { return maximumDeltaSeconds }
        return min(value, maximumDeltaSeconds)
    }
}
