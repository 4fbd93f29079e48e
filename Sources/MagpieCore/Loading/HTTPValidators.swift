#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an HTTP response said about its body's identity and freshness, kept with a cached entry so a
/// later request can revalidate it (`If-None-Match`, `If-Modified-Since`) or serve it while fresh.
///
/// Besides the validators it keeps the response headers RFC 9111's rules read (`Cache-Control`, `Expires`, `Date`,
/// `Age`, `Vary`), the request header values `Vary` names, and when the request was sent and the response received
/// (by the cache's clock): ``HTTPCachePolicy`` computes freshness from them. Networking produces it (from response
/// headers) and the data caches store it: it lives in the core so neither side depends on the other.
public struct HTTPValidators: Sendable, Equatable, Hashable, Codable {
    /// The response's `ETag`.
    public var etag: String?
    /// The response's `Last-Modified`.
    public var lastModified: String?
    /// `Cache-Control: max-age`, in seconds; 0 for `no-cache` / `no-store`; nil when the response gave none.
    /// Kept for entries stored before ``cacheControl`` was; ``HTTPCachePolicy`` prefers ``cacheControl``.
    public var maxAge: TimeInterval?
    /// The response's `Content-Type`.
    public var contentType: String?
    /// The response's `Cache-Control` (several lines joined by commas).
    public var cacheControl: String?
    /// The response's `Expires`.
    public var expires: String?
    /// The response's `Date`.
    public var date: String?
    /// The response's `Age`.
    public var age: String?
    /// The response's `Vary` (several lines joined by commas).
    public var vary: String?
    /// The request's values of the headers ``vary`` names, as sent (a header the request lacked is absent).
    public var varyingRequestHeaders: [HTTPHeaderField]
    /// When the request that got this response was sent, by the cache's clock.
    public var requestTime: Date?
    /// When its response arrived, by the cache's clock.
    public var responseTime: Date?

    /// Validators with the given values (all optional).
    ///
    /// - Parameters:
    ///   - etag: The `ETag` header, sent back as `If-None-Match`.
    ///   - lastModified: The `Last-Modified` header, sent back as `If-Modified-Since`.
    ///   - maxAge: Freshness lifetime in seconds.
    ///   - contentType: The `Content-Type` header.
    ///   - cacheControl: The `Cache-Control` header.
    ///   - expires: The `Expires` header.
    ///   - date: The `Date` header.
    ///   - age: The `Age` header.
    ///   - vary: The `Vary` header.
    ///   - varyingRequestHeaders: The request's values of the headers `vary` names.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response arrived.
    public init(
        etag: String? = nil, lastModified: String? = nil, maxAge: TimeInterval? = nil, contentType: String? = nil,
        cacheControl: String? = nil, expires: String? = nil, date: String? = nil, age: String? = nil, vary: String? = nil,
        varyingRequestHeaders: [HTTPHeaderField] = [], requestTime: Date? = nil, responseTime: Date? = nil
    ) {
        self.etag = etag
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.expires = expires
        self.date = date
        self.age = age
        self.vary = vary
        self.varyingRequestHeaders = varyingRequestHeaders
        self.requestTime = requestTime
        self.responseTime = responseTime
    }

    /// True when a conditional request can be made with these (an `ETag` or a `Last-Modified`).
    public var canRevalidate: Bool { etag != nil || lastModified != nil }

    /// These validators updated by a `304 Not Modified`'s: what the 304 repeats or changes wins, what it
    /// leaves out is kept (RFC 9111 §4.3.4). The 304's `Date`, `Age` and times replace the stored ones together:
    /// they describe the response as of the revalidation, so an `Age` the old response carried is dropped.
    ///
    /// - Parameter fresh: The validators of the 304 response.
    /// - Returns: The merged validators.
    public func merged(with fresh: HTTPValidators) -> HTTPValidators {
        var merged = self
        merged.etag = fresh.etag ?? etag
        merged.lastModified = fresh.lastModified ?? lastModified
        merged.maxAge = fresh.maxAge ?? maxAge
        merged.cacheControl = fresh.cacheControl ?? cacheControl
        merged.expires = fresh.expires ?? expires
        merged.vary = fresh.vary ?? vary
        if fresh.vary != nil { merged.varyingRequestHeaders = fresh.varyingRequestHeaders }
        if fresh.responseTime != nil || fresh.date != nil {
            merged.date = fresh.date
            merged.age = fresh.age
            merged.requestTime = fresh.requestTime ?? requestTime
            merged.responseTime = fresh.responseTime ?? responseTime
        }
        return merged
    }

    /// These validators stamped with the exchange's times and the request's values of the headers ``vary`` names.
    ///
    /// - Parameters:
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response arrived.
    ///   - requestHeaders: The headers the request carried.
    /// - Returns: The stamped validators.
    public func stamped(requestTime: Date, responseTime: Date, requestHeaders: [HTTPHeaderField]) -> HTTPValidators {
        var stamped = self
        stamped.requestTime = requestTime
        stamped.responseTime = responseTime
        stamped.varyingRequestHeaders = HTTPCachePolicy.varyingHeaders(named: vary, in: requestHeaders)
        return stamped
    }

    // MARK: Storage

    /// The fields added for RFC 9111 caching, as one JSON text for a data cache's index; nil when there are none
    /// (a cache entry that did not come from HTTP).
    package var cachingRecord: String? {
        let record = CachingRecord(
            cacheControl: cacheControl, expires: expires, date: date, age: age, vary: vary,
            varying: varyingRequestHeaders.isEmpty ? nil : varyingRequestHeaders.map { [$0.name, $0.value] },
            requestTime: requestTime?.timeIntervalSince1970, responseTime: responseTime?.timeIntervalSince1970)
        guard record != CachingRecord() else { return nil }
        guard let data = try? JSONEncoder().encode(record) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Restores the fields of ``cachingRecord``; an unreadable record restores nothing (the entry then has no HTTP
    /// freshness information and is revalidated, never served as fresh by mistake).
    ///
    /// - Parameter text: What ``cachingRecord`` gave.
    package mutating func restoreCachingRecord(_ text: String?) {
        guard let text, let record = try? JSONDecoder().decode(CachingRecord.self, from: Data(text.utf8)) else { return }
        cacheControl = record.cacheControl
        expires = record.expires
        date = record.date
        age = record.age
        vary = record.vary
        varyingRequestHeaders = (record.varying ?? []).compactMap { $0.count == 2 ? HTTPHeaderField(name: $0[0], value: $0[1]) : nil }
        requestTime = record.requestTime.map(Date.init(timeIntervalSince1970:))
        responseTime = record.responseTime.map(Date.init(timeIntervalSince1970:))
    }

    private struct CachingRecord: Codable, Equatable {
        var cacheControl: String?
        var expires: String?
        var date: String?
        var age: String?
        var vary: String?
        var varying: [[String]]?
        var requestTime: Double?
        var responseTime: Double?
    }
}
