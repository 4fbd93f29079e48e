import Synchronization

/// A token bucket on starting requests (Nuke's rate limiter): up to ``burst`` requests start at once, then one every
/// 1/``requestsPerSecond`` seconds. A request that finds the bucket empty reserves the next token and sleeps until
/// it is due, so waiters start in the order they arrived and the rate holds under any number of them.
public final class RateLimiter: Sendable {
    /// Tokens added per second.
    public let requestsPerSecond: Double
    /// The bucket's size: how many requests may start at once after a quiet spell.
    public let burst: Int

    private struct Bucket {
        /// May go negative: each waiter's reservation is a token borrowed from the future.
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let bucket: Mutex<Bucket>

    /// A limiter starting with a full bucket.
    ///
    /// - Parameters:
    ///   - requestsPerSecond: The sustained rate (more than 0); Nuke uses 80.
    ///   - burst: The bucket's size (at least 1); Nuke uses 25.
    public init(requestsPerSecond: Double, burst: Int) {
        self.requestsPerSecond = max(requestsPerSecond, 0.001)
        self.burst = max(1, burst)
        bucket = Mutex(Bucket(tokens: Double(max(1, burst)), updated: .now))
    }

    /// Takes a token, waiting until one is due.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits (its reservation is given back).
    public func acquire() async throws {
        try await acquire(now: .now)
    }

    /// ``acquire()`` as of `now` (tests pass their instants).
    func acquire(now: ContinuousClock.Instant) async throws {
        let wait = reserve(now: now)
        guard wait > .zero else { return }
        do {
            try await Task.sleep(for: wait)
        } catch {
            bucket.withLock { $0.tokens += 1 }
            throw error
        }
    }

    /// Takes a token now, possibly borrowed; returns how long until it is due.
    func reserve(now: ContinuousClock.Instant = .now) -> Duration {
        bucket.withLock { bucket in
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(Double(burst), bucket.tokens + max(0, seconds) * requestsPerSecond)
            bucket.updated = max(bucket.updated, now)
            bucket.tokens -= 1
            guard bucket.tokens < 0 else { return .zero }
            return .milliseconds(Int64((-bucket.tokens / requestsPerSecond * 1000).rounded(.up)))
        }
    }
}
