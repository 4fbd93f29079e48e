import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// URLs whose last download failed for a reason that retrying will not fix (404, not an
/// image, undecodable bytes, a redirect loop…). The manager
/// refuses them at once with ``MagpieError/RequestFailureReason/recentlyFailed(_:previous:)`` until the option
/// ``MagpieOption/retryFailed`` is given or the URL is removed. Transient failures (timeouts, 5xx, 429,
/// connection errors) and cancellations are never recorded.
///
/// Thread-safe and bounded: past ``capacity`` the oldest URL is forgotten. Entries do not expire with time.
public final class FailedURLList: Sendable {
    private struct State {
        var reasons: [String: (reason: String, order: UInt64)] = [:]
        var order: UInt64 = 0
    }

    /// Most URLs remembered (at least 1).
    public let capacity: Int
    private let state = Mutex(State())

    /// An empty list holding at most `capacity` URLs.
    ///
    /// - Parameter capacity: Most URLs remembered (default 1000); values below 1 count as 1.
    public init(capacity: Int = 1000) {
        self.capacity = max(1, capacity)
    }

    /// Whether `error` is one the list remembers: not transient, not a cancellation.
    ///
    /// - Parameter error: A retrieval's error.
    /// - Returns: True when retrying the same URL cannot be expected to succeed.
    ///
    /// Failures that depend on the request rather than the URL are not permanent either: size
    /// limits (another caller may allow more or decode smaller), a refused redirect (the handler
    /// is per request), 401/403 (credentials come from the request modifier).
    public static func isPermanent(_ error: MagpieError) -> Bool {
        if error.isTransient || error.isCancellation { return false }
        if let status = error.statusCode, status == 401 || status == 403 { return false }
        if case .tooLarge? = error.decodingReason { return false }
        switch error {
        case .requestFailed(reason: .recentlyFailed), .requestFailed(reason: .cancelledByModifier),
            .requestFailed(reason: .dataProviderFailed), .requestFailed(reason: .redirectRefused),
            .responseFailed(reason: .tooLarge), .processingFailed, .cacheFailed, .encodingFailed:
            return false
        default:
            return true
        }
    }

    /// Remembers `url` as failed with `error`, when ``isPermanent(_:)`` says the error is permanent;
    /// otherwise does nothing. Recording a URL again replaces its reason and makes it the newest.
    ///
    /// - Parameters:
    ///   - url: The URL that failed.
    ///   - error: Why it failed; its description is kept as the reason.
    public func record(_ url: URL, error: MagpieError) {
        guard Self.isPermanent(error) else { return }
        state.withLock { state in
            state.order += 1
            state.reasons[url.absoluteString] = ("\(error)", state.order)
            if state.reasons.count > capacity,
                let oldest = state.reasons.min(by: { $0.value.order < $1.value.order })?.key
            {
                state.reasons[oldest] = nil
            }
        }
    }

    /// Why `url` failed, when it is on the list.
    ///
    /// - Parameter url: The URL to look up (compared by absolute string).
    /// - Returns: The failure's description, or nil when the URL is not on the list.
    public func failure(for url: URL) -> String? {
        state.withLock { $0.reasons[url.absoluteString]?.reason }
    }

    /// Whether `url` is on the list.
    ///
    /// - Parameter url: The URL to look up (compared by absolute string).
    public func contains(_ url: URL) -> Bool { failure(for: url) != nil }

    /// Forgets `url`, so the next retrieval downloads it again.
    ///
    /// - Parameter url: The URL to forget; nothing happens when it is not on the list.
    public func remove(_ url: URL) {
        state.withLock { _ = $0.reasons.removeValue(forKey: url.absoluteString) }
    }

    /// Forgets every URL.
    public func removeAll() {
        state.withLock { $0.reasons.removeAll() }
    }

    /// Number of URLs on the list.
    public var count: Int { state.withLock { $0.reasons.count } }
}
