import Foundation
import Testing
@testable import Magpie

/// The token bucket on starting requests: a full bucket's burst, the queue of reservations at 1/rate, refilling
/// capped at the burst, and a cancelled waiter giving its token back. Times are explicit instants, not sleeps.
@Suite struct RateLimiterTests {
    @Test func aFullBucketLetsBurstRequestsThroughThenSpacesTheRestAtOneOverTheRate() {
        let limiter = RateLimiter(requestsPerSecond: 4, burst: 3)
        let start = ContinuousClock.now
        let waits = (0..<6).map { _ in limiter.reserve(now: start) }
        #expect(waits == [.zero, .zero, .zero, .milliseconds(250), .milliseconds(500), .milliseconds(750)])
    }

    @Test func tokensRefillWithElapsedTime() {
        let limiter = RateLimiter(requestsPerSecond: 4, burst: 2)
        let start = ContinuousClock.now
        #expect(limiter.reserve(now: start) == .zero)
        #expect(limiter.reserve(now: start) == .zero)
        // An eighth of a second later half a token has come back: the next one is due in another eighth.
        #expect(limiter.reserve(now: start + .milliseconds(125)) == .milliseconds(125))
        // A quarter second later one more token has come in, against the half token still owed: again an eighth to wait.
        #expect(limiter.reserve(now: start + .milliseconds(375)) == .milliseconds(125))
    }

    @Test func afterAnIdleSpellTheBucketRefillsButNeverAboveTheBurst() {
        let limiter = RateLimiter(requestsPerSecond: 4, burst: 2)
        let start = ContinuousClock.now
        for _ in 0..<5 { _ = limiter.reserve(now: start) }
        // Ten idle seconds would be 40 tokens; the bucket holds 2.
        let later = start + .seconds(10)
        #expect(limiter.reserve(now: later) == .zero)
        #expect(limiter.reserve(now: later) == .zero)
        #expect(limiter.reserve(now: later) == .milliseconds(250))
    }

    @Test func waitsAreRoundedUpToWholeMilliseconds() {
        let limiter = RateLimiter(requestsPerSecond: 3, burst: 1)
        let start = ContinuousClock.now
        _ = limiter.reserve(now: start)
        // 1/3 s = 333.33… ms.
        #expect(limiter.reserve(now: start) == .milliseconds(334))
    }

    @Test func anInstantEarlierThanTheLastDoesNotRefillOrRewindTheBucket() {
        let limiter = RateLimiter(requestsPerSecond: 4, burst: 1)
        let start = ContinuousClock.now
        _ = limiter.reserve(now: start + .seconds(1))
        // An older instant adds nothing and leaves the bucket's time where it was.
        #expect(limiter.reserve(now: start) == .milliseconds(250))
        #expect(limiter.reserve(now: start + .seconds(1)) == .milliseconds(500))
    }

    @Test func aCancelledAcquireThrowsAndGivesItsTokenBack() async throws {
        // Half a request per second, bucket of one: each borrowed token is two seconds of waiting.
        let limiter = RateLimiter(requestsPerSecond: 0.5, burst: 1)
        let start = ContinuousClock.now
        #expect(limiter.reserve(now: start) == .zero)
        let waiter = Task { try await limiter.acquire() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        // Whatever instant the waiter reserved at, giving its token back leaves the bucket as if it never took one:
        // the next reservation is due when the token spent at `start` has come back, 2 s after `start`.
        let now = ContinuousClock.now
        let elapsed = start.duration(to: now)
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(elapsedSeconds < 1, "the check needs the cancelled waiter to finish well within a token's time")
        let expected = Duration.milliseconds(Int64(((1 - elapsedSeconds * 0.5) / 0.5 * 1000).rounded(.up)))
        let wait = limiter.reserve(now: now)
        #expect(wait == expected)
        // Had the waiter kept its token, this one would wait about 4 s.
        #expect(wait <= .seconds(2))
    }
}
