#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RFC 9111's rules for a private cache, applied to one stored response: its freshness lifetime, its current age,
/// whether it may be served fresh, stale while revalidating or stale on error, whether it may be stored at all, and
/// whether a new request's headers match what its `Vary` names.
///
/// Pure: everything comes from the stored ``HTTPValidators`` and the time given, so the pipeline, the server and
/// tests ask the same questions of the same facts.
public struct HTTPCachePolicy: Sendable, Equatable {
    /// The stored response's facts.
    public let validators: HTTPValidators
    /// Its `Cache-Control` directives.
    public let cacheControl: CacheControl
    /// When the entry was stored or last revalidated: the response time of entries stored without one.
    public let storedAt: Date

    /// The heuristic's share of the time since `Last-Modified` (RFC 9111 §4.2.2 suggests 10 %).
    public static let heuristicFraction = 0.1
    /// The longest heuristic freshness lifetime: one day.
    public static let heuristicLimit: TimeInterval = 86_400

    /// The policy of a stored response.
    ///
    /// - Parameters:
    ///   - validators: What was stored with the response.
    ///   - storedAt: When it was stored (used when ``HTTPValidators/responseTime`` is unknown).
    public init(validators: HTTPValidators, storedAt: Date) {
        self.validators = validators
        self.storedAt = storedAt
        if let header = validators.cacheControl {
            cacheControl = CacheControl(parsing: header)
        } else {
            // An entry stored before the header itself was kept: its max-age, where 0 stood for no-cache/no-store.
            var legacy = CacheControl()
            legacy.maxAge = validators.maxAge.map { Int(min(max(0, $0), Double(CacheControl.maximumDeltaSeconds))) }
            cacheControl = legacy
        }
    }

    /// The policy of a response as it arrives.
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - receivedAt: When it arrived.
    public init(response: HTTPResponseInfo, receivedAt: Date) {
        self.init(validators: response.validators, storedAt: receivedAt)
    }

    private var responseTime: Date { validators.responseTime ?? storedAt }
    private var dateValue: Date { validators.date.flatMap(HTTPDate.parse) ?? responseTime }

    /// How long the response is fresh (RFC 9111 §4.2.1): `max-age` (`s-maxage` is for shared caches), else
    /// `Expires` − `Date` (an invalid `Expires` means already expired), else 10 % of `Date` − `Last-Modified` capped at
    /// one day, else 0. `no-cache` makes it 0.
    public var freshnessLifetime: TimeInterval {
        if cacheControl.noCache { return 0 }
        if let maxAge = cacheControl.maxAge { return TimeInterval(maxAge) }
        if let expires = validators.expires {
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            return max(0, expiry.timeIntervalSince(dateValue))
        }
        if let lastModified = validators.lastModified.flatMap(HTTPDate.parse) {
            let sinceModified = dateValue.timeIntervalSince(lastModified)
            return min(Self.heuristicLimit, max(0, sinceModified * Self.heuristicFraction))
        }
        return 0
    }

    /// The response's age at `now` (RFC 9111 §4.2.3): the larger of its apparent age (`response_time` − `Date`) and
    /// its `Age` plus the time the request was in transit, plus the time it has spent in the cache since.
    ///
    /// - Parameter now: The time asked about.
    public func currentAge(at now: Date) -> TimeInterval {
        let apparentAge = max(0, responseTime.timeIntervalSince(dateValue))
        // A list-valued Age: its first member (RFC 9111 §5.1).
        let firstAge = validators.age?.split(separator: ",", omittingEmptySubsequences: false).first?.trimmingASCIIWhitespace
        let ageValue = TimeInterval(CacheControl.deltaSeconds(firstAge) ?? 0)
        let responseDelay = max(0, responseTime.timeIntervalSince(validators.requestTime ?? responseTime))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        let residentTime = max(0, now.timeIntervalSince(responseTime))
        return correctedInitialAge + residentTime
    }

    /// How far past its freshness the response is at `now`: negative or zero while fresh.
    ///
    /// - Parameter now: The time asked about.
    public func staleness(at now: Date) -> TimeInterval { currentAge(at: now) - freshnessLifetime }

    /// True while the response may be served without asking the origin.
    ///
    /// - Parameter now: The time asked about.
    public func isFresh(at now: Date) -> Bool { staleness(at: now) < 0 }

    /// True when the response may be served stale at `now` while one revalidation runs in the background
    /// (`stale-while-revalidate`, unless `must-revalidate`, `proxy-revalidate` or `no-cache` forbid stale use).
    ///
    /// - Parameter now: The time asked about.
    public func allowsStaleWhileRevalidating(at now: Date) -> Bool {
        guard let window = cacheControl.staleWhileRevalidate, !cacheControl.forbidsServingStale else { return false }
        let staleness = staleness(at: now)
        return staleness >= 0 && staleness < TimeInterval(window)
    }

    /// True when the response may be served stale at `now` because revalidating it failed (`stale-if-error`, unless
    /// stale use is forbidden).
    ///
    /// - Parameter now: The time asked about.
    public func allowsStaleOnError(at now: Date) -> Bool {
        guard let window = cacheControl.staleIfError, !cacheControl.forbidsServingStale else { return false }
        return staleness(at: now) < TimeInterval(window)
    }

    /// False for `no-store`: such a response is never written to a cache.
    public var isStorable: Bool { !cacheControl.noStore }

    /// True when revalidating is pointless while fresh (`immutable`), even when the caller asks for it.
    public var isImmutable: Bool { cacheControl.immutable }

    /// The header names `Vary` lists, lowercased; `["*"]` when it has `*`.
    public var varyingHeaderNames: [String] { Self.names(inVary: validators.vary) }

    /// True when a request with `requestHeaders` may be served this response (RFC 9111 §4.1): every header `Vary`
    /// names has the value the stored request had (both absent counts as equal); `Vary: *` never matches.
    ///
    /// - Parameter requestHeaders: The new request's headers.
    public func matchesVary(requestHeaders: [HTTPHeaderField]) -> Bool {
        let names = varyingHeaderNames
        if names.contains("*") { return false }
        return names.allSatisfy { name in
            Self.value(of: name, in: requestHeaders) == Self.value(of: name, in: validators.varyingRequestHeaders)
        }
    }

    /// The lines of `requestHeaders` that `vary` names, one per name (values of repeated lines joined by commas).
    ///
    /// - Parameters:
    ///   - vary: A `Vary` header value.
    ///   - requestHeaders: A request's headers.
    public static func varyingHeaders(named vary: String?, in requestHeaders: [HTTPHeaderField]) -> [HTTPHeaderField] {
        names(inVary: vary).compactMap { name in value(of: name, in: requestHeaders).map { HTTPHeaderField(name: name, value: $0) } }
    }

    private static func names(inVary vary: String?) -> [String] {
        guard let vary else { return [] }
        let names = vary.split(separator: ",").map { $0.trimmingASCIIWhitespace.lowercased() }.filter { !$0.isEmpty }
        return names.contains("*") ? ["*"] : names
    }

    /// The combined value of header `name`, whitespace around commas normalised; nil when absent.
    private static func value(of name: String, in headers: [HTTPHeaderField]) -> String? {
        let values = headers.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
        guard !values.isEmpty else { return nil }
        return values.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingASCIIWhitespace }.joined(separator: ", ")
    }
}
