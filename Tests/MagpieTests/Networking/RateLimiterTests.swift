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
        // A tenth of a request per second, bucket of one: a borrowed token is ten seconds of waiting. Every step runs
        // at the same explicit instant, so how long the machine takes to run the waiter does not matter.
        let limiter = RateLimiter(requestsPerSecond: 0.1, burst: 1)
        let start = ContinuousClock.now
        #expect(limiter.reserve(now: start) == .zero)
        // Cancelled before it runs: it still reserves (ten seconds away), its sleep throws, and the token goes back.
        let waiter = Task { try await limiter.acquire(now: start) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        // As if the waiter never took a token: 10 s until the one spent first is back (20 s had it kept its own).
        #expect(limiter.reserve(now: start) == .seconds(10))
    }
}
