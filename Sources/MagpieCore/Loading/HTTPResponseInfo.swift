#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP header line of a request or response.
public struct HTTPHeaderField: Sendable, Equatable, Hashable, Codable {
    /// The header's name as the server sent it.
    public var name: String
    /// The header's value, as sent (not unfolded or split at commas).
    public var value: String

    /// A header line.
    ///
    /// - Parameters:
    ///   - name: The header's name, for example `Authorization`; matched case-insensitively.
    ///   - value: The header's value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// What Magpie keeps of an HTTP response: the final URL (after redirects), the status and the headers.
public struct HTTPResponseInfo: Sendable, Equatable {
    /// The URL that answered (the last one of a redirect chain).
    public var url: URL
    /// The HTTP status code, for example 200 or 404.
    public var statusCode: Int
    /// All header lines, in order.
    public var headers: [HTTPHeaderField]

    /// A response description (public so tests and delegates can build one).
    ///
    /// - Parameters:
    ///   - url: The URL that answered.
    ///   - statusCode: The HTTP status code.
    ///   - headers: The header lines, in order (default none).
    public init(url: URL, statusCode: Int, headers: [HTTPHeaderField] = []) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
    }

    /// The first value of the header `name` (case-insensitive), if present.
    public subscript(header name: String) -> String? {
        headers.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// `Content-Type` without parameters, lowercased (`image/png`).
    public var contentType: String? {
        self[header: "Content-Type"].map {
            ($0.split(separator: ";", maxSplits: 1).first ?? "").trimmingASCIIWhitespace.lowercased()
        }
    }

    /// `Content-Length`, when present and valid.
    public var contentLength: Int? {
        self[header: "Content-Length"].flatMap { Int($0.trimmingASCIIWhitespace) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// `Retry-After` as a delay: delta-seconds, or an HTTP date measured from `now`; clamped to 0...1 day.
    ///
    /// - Parameter now: The time an HTTP-date value is measured from (default: the current time).
    /// - Returns: The delay, or nil when the header is absent or neither an integer nor an HTTP date.
    public func retryAfter(now: Date = Date()) -> Duration? {
        guard let value = self[header: "Retry-After"]?.trimmingASCIIWhitespace else { return nil }
        // Clamped to a day: anything longer is "not soon" to every caller, and huge values must not trap.
        let day = 86_400
        // delta-seconds is digits only ("+120" is not one); more than 9 digits is more than a day anyway.
        if !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return .seconds(value.utf8.count > 9 ? day : min(day, Int(value) ?? day))
        }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .milliseconds(Int(min(Double(day), max(0, date.timeIntervalSince(now))) * 1000))
    }

    /// Every value of the header `name` (case-insensitive), joined by commas as RFC 9110 §5.3 allows; nil when absent.
    public func combinedValue(of name: String) -> String? {
        let values = headers.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The cache validators and freshness this response carries (`ETag`, `Last-Modified`, `Content-Type`, and the
    /// headers RFC 9111 reads: `Cache-Control`, `Expires`, `Date`, `Age`, `Vary`), as stored in data cache entries.
    /// ``HTTPValidators/maxAge`` is `max-age`, or 0 for `no-cache`/`no-store`. The request side (times, the request's
    /// values of the `Vary` headers) is added by the caller with ``HTTPValidators/stamped(requestTime:responseTime:requestHeaders:)``.
    public var validators: HTTPValidators {
        let cacheControlHeader = combinedValue(of: "Cache-Control")
        let directives = CacheControl(parsing: cacheControlHeader)
        let maxAge: TimeInterval? =
            directives.noCache || directives.noStore ? 0 : directives.maxAge.map(TimeInterval.init)
        return HTTPValidators(
            etag: self[header: "ETag"], lastModified: self[header: "Last-Modified"],
            maxAge: maxAge, contentType: self[header: "Content-Type"], cacheControl: cacheControlHeader,
            expires: self[header: "Expires"], date: self[header: "Date"], age: self[header: "Age"],
            vary: combinedValue(of: "Vary"))
    }
}
