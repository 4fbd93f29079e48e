import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a retry strategy knows about a failed attempt.
public struct RetryContext: Sendable {
    /// The URL that failed.
    public let url: URL
    /// Why it failed; ``MagpieError/isTransient`` tells failures worth retrying.
    public let error: MagpieError
    /// Retries already made for this download (0 after the first attempt).
    public let retriedCount: Int
    /// The server's `Retry-After`, when the failing response had one.
    public let retryAfter: Duration?

    /// A context (public so custom strategies can be tested).
    ///
    /// - Parameters:
    ///   - url: The URL that failed.
    ///   - error: Why the attempt failed.
    ///   - retriedCount: Retries already made (0 after the first attempt).
    ///   - retryAfter: The server's `Retry-After` delay, if any.
    public init(url: URL, error: MagpieError, retriedCount: Int, retryAfter: Duration?) {
        self.url = url
        self.error = error
        self.retriedCount = retriedCount
        self.retryAfter = retryAfter
    }
}

/// A retry strategy's answer.
public enum RetryDecision: Sendable, Equatable {
    /// Try again after waiting this long.
    case retry(after: Duration)
    /// Give up; the download fails with the last error.
    case stop
}

/// Decides whether a failed download is tried again. Cancellation always stops retries,
/// whatever the strategy says.
public protocol RetryStrategy: Sendable {
    /// The decision for one failed attempt. The download keeps its slot released while waiting.
    ///
    /// - Parameter context: The failed attempt: URL, error, retries so far and `Retry-After`.
    /// - Returns: ``RetryDecision/retry(after:)`` to try again after a delay, or ``RetryDecision/stop``.
    func retry(context: RetryContext) async -> RetryDecision
}

/// Retries transient failures (connection errors, timeouts, truncated bodies, 5xx, 408, 429)
/// up to ``maxRetryCount`` times, waiting ``retryInterval`` or the server's `Retry-After`, whichever
/// is longer. Never retries 4xx (other than 408/429), bad content or cancellation.
public struct DelayRetryStrategy: RetryStrategy {
    /// How long to wait before a retry.
    public enum Interval: Sendable {
        /// The same wait, in seconds, before every retry.
        case seconds(Double)
        /// A wait that grows linearly: `n × seconds` before the n-th retry.
        case accumulated(Double)
        /// A wait computed from the retry number (1 for the first retry).
        case custom(@Sendable (Int) -> Duration)

        /// The wait before retry number `retry`.
        ///
        /// - Parameter retry: The retry about to be made, 1 for the first.
        /// - Returns: The delay, rounded down to whole milliseconds for the second-based cases.
        public func delay(forRetry retry: Int) -> Duration {
            switch self {
            case .seconds(let seconds): .milliseconds(Int(seconds * 1000))
            case .accumulated(let seconds): .milliseconds(Int(seconds * 1000 * Double(retry)))
            case .custom(let block): block(retry)
            }
        }
    }

    /// Most retries after the first attempt.
    public let maxRetryCount: Int
    /// Wait between attempts.
    public let retryInterval: Interval
    /// A `Retry-After` longer than this stops retrying instead of waiting. Default 60 s.
    public let maximumRetryAfter: Duration

    /// A strategy; default 3 s between attempts.
    ///
    /// - Parameters:
    ///   - maxRetryCount: Most retries after the first attempt; 0 never retries.
    ///   - retryInterval: The wait before each retry (default 3 s).
    ///   - maximumRetryAfter: The longest `Retry-After` still honoured (default 60 s).
    public init(maxRetryCount: Int, retryInterval: Interval = .seconds(3), maximumRetryAfter: Duration = .seconds(60)) {
        self.maxRetryCount = maxRetryCount
        self.retryInterval = retryInterval
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// ``RetryDecision/retry(after:)`` when the error is transient, fewer than ``maxRetryCount`` retries were
    /// made and any `Retry-After` is at most ``maximumRetryAfter``; ``RetryDecision/stop`` otherwise.
    public func retry(context: RetryContext) async -> RetryDecision {
        guard context.error.isTransient, context.retriedCount < maxRetryCount else { return .stop }
        var delay = retryInterval.delay(forRetry: context.retriedCount + 1)
        if let retryAfter = context.retryAfter {
            guard retryAfter <= maximumRetryAfter else { return .stop }
            delay = max(delay, retryAfter)
        }
        return .retry(after: delay)
    }
}
