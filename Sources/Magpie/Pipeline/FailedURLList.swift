#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// URLs whose last download failed for a reason that retrying will not fix (404, not an
/// image, undecodable bytes, a redirect loop…), SDWebImage's failed-URL list. The manager
/// refuses them at once with `RequestFailureReason.recentlyFailed` until the option
/// `retryFailed` is given or the URL is removed. Transient failures (timeouts, 5xx, 429,
/// connection errors) and cancellations are never recorded.
///
/// Thread-safe and bounded: past `capacity` the oldest URL is forgotten.
public final class FailedURLList: Sendable {
    private struct State {
        var reasons: [String: (reason: String, order: UInt64)] = [:]
        var order: UInt64 = 0
    }

    /// Most URLs remembered.
    public let capacity: Int
    private let state = Mutex(State())

    /// An empty list holding at most `capacity` URLs.
    public init(capacity: Int = 1000) {
        self.capacity = max(1, capacity)
    }

    /// Whether `error` is one the list remembers: not transient, not a cancellation.
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

    /// Remembers `url` as failed with `error`, when the error is permanent.
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
    public func failure(for url: URL) -> String? {
        state.withLock { $0.reasons[url.absoluteString]?.reason }
    }

    /// Whether `url` is on the list.
    public func contains(_ url: URL) -> Bool { failure(for: url) != nil }

    /// Forgets `url`.
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
