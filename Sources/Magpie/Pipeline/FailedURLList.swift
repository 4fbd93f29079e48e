import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// URLs whose last download failed for a reason that retrying at once will not fix (404, not an
/// image, undecodable bytes, a redirect loop…). The manager refuses them at once with
/// ``MagpieError/RequestFailureReason/recentlyFailed(_:previous:)`` — which carries the original ``MagpieError``,
/// status code included — until the entry expires, the option ``MagpieOption/retryFailed`` is given or the URL is
/// removed. Transient failures (timeouts, 5xx, 429, connection errors) and cancellations are not recorded, with one
/// exception: a 429 or 503 that says when to come back (`Retry-After`) is remembered until then, so callers wait as
/// the origin asked instead of hammering it.
///
/// Entries expire: after ``expiration`` (default 60 s), so a file that appears on the origin later is served
/// without `.retryFailed`; 404 and 410 answers after ``notFoundExpiration`` (default: the same 60 s; raise it to
/// use the list as a longer negative cache). Thread-safe and bounded: past ``capacity`` the oldest URL is forgotten.
public final class FailedURLList: Sendable {
    private struct Entry {
        var error: MagpieError
        var expires: Date
        var order: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var order: UInt64 = 0
    }

    /// Most URLs remembered (at least 1).
    public let capacity: Int
    /// How long a failure is remembered (404 and 410 use ``notFoundExpiration``).
    public let expiration: Duration
    /// How long a 404 or 410 is remembered.
    public let notFoundExpiration: Duration
    private let clock: CacheClock
    private let state = Mutex(State())

    /// An empty list holding at most `capacity` URLs, each for `expiration`.
    ///
    /// - Parameters:
    ///   - capacity: Most URLs remembered (default 1000); values below 1 count as 1.
    ///   - expiration: How long a failure is remembered (default 60 s); zero or less remembers nothing.
    ///   - notFoundExpiration: How long a 404 or 410 is remembered; nil (the default) for `expiration`.
    ///   - clock: The time source (tests pass their own); the system clock by default.
    public init(
        capacity: Int = 1000, expiration: Duration = .seconds(60), notFoundExpiration: Duration? = nil,
        clock: CacheClock = .system
    ) {
        self.capacity = max(1, capacity)
        self.expiration = expiration
        self.notFoundExpiration = notFoundExpiration ?? expiration
        self.clock = clock
    }

    /// Whether `error` is one the list remembers: not transient, not a cancellation.
    ///
    /// - Parameter error: A retrieval's error.
    /// - Returns: True when retrying the same URL at once cannot be expected to succeed.
    ///
    /// Failures that depend on the request rather than the URL are not permanent either: size
    /// limits (another caller may allow more or decode smaller), a refused redirect (the handler
    /// is per request), 401/403 (credentials come from the request modifier), a refusal by the network access policy
    /// (it depends on the DNS answer of the moment, and refusing again costs no request).
    public static func isPermanent(_ error: MagpieError) -> Bool {
        if error.isTransient || error.isCancellation { return false }
        if let status = error.statusCode, status == 401 || status == 403 { return false }
        if case .tooLarge? = error.decodingReason { return false }
        switch error {
        case .requestFailed(reason: .recentlyFailed), .requestFailed(reason: .cancelledByModifier),
            .requestFailed(reason: .dataProviderFailed), .requestFailed(reason: .redirectRefused),
            .requestFailed(reason: .networkAccessRefused), .requestFailed(reason: .spoolFailed),
            .responseFailed(reason: .tooLarge), .processingFailed, .cacheFailed, .encodingFailed:
            return false
        default:
            return true
        }
    }

    /// Remembers `url` as failed with `error`, when ``isPermanent(_:)`` says the error is permanent (for ``expiration``,
    /// or ``notFoundExpiration`` for 404/410), or when it is a 429 or 503 with `Retry-After` (for the delay it asks,
    /// at most a day); otherwise does nothing. Recording a URL again replaces its error, restarts its expiry and makes
    /// it the newest.
    ///
    /// - Parameters:
    ///   - url: The URL that failed.
    ///   - error: Why it failed; kept as it is and handed back by ``failure(for:)``.
    public func record(_ url: URL, error: MagpieError) {
        let lifetime: Duration
        if let delay = Self.retryAfter(error, now: clock.now()) {
            lifetime = delay
        } else if Self.isPermanent(error) {
            lifetime = error.statusCode == 404 || error.statusCode == 410 ? notFoundExpiration : expiration
        } else {
            return
        }
        guard lifetime > .zero else { return }
        let expires = clock.now().addingTimeInterval(TimeInterval(lifetime.milliseconds) / 1000)
        state.withLock { state in
            state.order += 1
            state.entries[url.absoluteString] = Entry(error: error, expires: expires, order: state.order)
            guard state.entries.count > capacity else { return }
            // Expired entries go first; then the oldest.
            let now = clock.now()
            state.entries = state.entries.filter { $0.value.expires > now }
            if state.entries.count > capacity, let oldest = state.entries.min(by: { $0.value.order < $1.value.order })?.key {
                state.entries[oldest] = nil
            }
        }
    }

    /// Why `url` failed, while it is on the list; an expired entry is removed and not returned.
    ///
    /// - Parameter url: The URL to look up (compared by absolute string).
    /// - Returns: The error of its last failure, or nil when the URL is not on the list.
    public func failure(for url: URL) -> MagpieError? {
        let key = url.absoluteString
        return state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            guard entry.expires > clock.now() else {
                state.entries[key] = nil
                return nil
            }
            return entry.error
        }
    }

    /// The `Retry-After` delay of a 429 or 503 answer; nil for other errors or without the header.
    private static func retryAfter(_ error: MagpieError, now: Date) -> Duration? {
        guard case .responseFailed(reason: .badStatus(let response)) = error, [429, 503].contains(response.statusCode) else {
            return nil
        }
        return response.retryAfter(now: now)
    }

    /// Whether `url` is on the list and its entry has not expired.
    ///
    /// - Parameter url: The URL to look up (compared by absolute string).
    public func contains(_ url: URL) -> Bool { failure(for: url) != nil }

    /// Forgets `url`, so the next retrieval downloads it again.
    ///
    /// - Parameter url: The URL to forget; nothing happens when it is not on the list.
    public func remove(_ url: URL) {
        state.withLock { _ = $0.entries.removeValue(forKey: url.absoluteString) }
    }

    /// Forgets every URL.
    public func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// Number of URLs on the list whose entries have not expired.
    public var count: Int {
        let now = clock.now()
        return state.withLock { $0.entries.values.count { $0.expires > now } }
    }
}
