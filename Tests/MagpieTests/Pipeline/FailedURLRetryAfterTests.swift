import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// The failed-URL list's one exception for transient failures: a 429 or 503 with `Retry-After` is remembered until
/// the origin said to come back, measured by the list's own clock.
@Suite struct FailedURLRetryAfterTests {
    static let url = URL(string: "https://example.com/busy.png")!

    static func badStatus(_ status: Int, retryAfter: String?) -> MagpieError {
        let headers = retryAfter.map { [HTTPHeaderField(name: "Retry-After", value: $0)] } ?? []
        return .responseFailed(reason: .badStatus(HTTPResponseInfo(url: url, statusCode: status, headers: headers)))
    }

    @Test(arguments: [503, 429])
    func aRetryAfterInSecondsIsRememberedUntilItPasses(status: Int) {
        let clock = TestClock()
        // The default expiration (60 s) is shorter than the Retry-After: the header's delay is what counts.
        let list = FailedURLList(clock: clock.clock)
        list.record(Self.url, error: Self.badStatus(status, retryAfter: "120"))
        #expect(list.contains(Self.url))
        clock.advance(119)
        #expect(list.contains(Self.url))
        clock.advance(2)
        #expect(!list.contains(Self.url))
    }

    @Test func anHTTPDateRetryAfterIsMeasuredFromTheListsClock() {
        // The test clock is in 2027, far from the real time: measured from the real time the date would be clamped to
        // a day (or be past already).
        let clock = TestClock()
        let list = FailedURLList(clock: clock.clock)
        list.record(Self.url, error: Self.badStatus(503, retryAfter: imfFixdate(clock.clock.now().addingTimeInterval(300))))
        clock.advance(299)
        #expect(list.contains(Self.url))
        clock.advance(2)
        #expect(!list.contains(Self.url))
    }

    @Test func aRetryAfterLongerThanADayIsRememberedForADay() {
        let clock = TestClock()
        let list = FailedURLList(clock: clock.clock)
        list.record(Self.url, error: Self.badStatus(429, retryAfter: "999999"))
        clock.advance(86_399)
        #expect(list.contains(Self.url))
        clock.advance(2)
        #expect(!list.contains(Self.url))
    }

    @Test(arguments: [503, 429])
    func withoutRetryAfterTheTransientAnswerIsNotRemembered(status: Int) {
        let list = FailedURLList(clock: TestClock().clock)
        list.record(Self.url, error: Self.badStatus(status, retryAfter: nil))
        #expect(!list.contains(Self.url))
        #expect(list.count == 0)
    }

    @Test(arguments: ["0", "soon", "Fri, 15 Jan 2027 07:00:00 GMT"])
    func aRetryAfterThatAsksForNoWaitIsNotRemembered(value: String) {
        // Zero, unreadable, or a date already past by the list's clock.
        let list = FailedURLList(clock: TestClock().clock)
        list.record(Self.url, error: Self.badStatus(503, retryAfter: value))
        #expect(!list.contains(Self.url))
    }

    @Test(arguments: [500, 502, 504])
    func otherServerErrorsWithRetryAfterAreNotRemembered(status: Int) {
        let list = FailedURLList(clock: TestClock().clock)
        list.record(Self.url, error: Self.badStatus(status, retryAfter: "120"))
        #expect(!list.contains(Self.url))
    }

    @Test func failureForTheURLIsTheRecorded503WithItsResponse() throws {
        let list = FailedURLList(clock: TestClock().clock)
        let error = Self.badStatus(503, retryAfter: "120")
        list.record(Self.url, error: error)
        let failure = try #require(list.failure(for: Self.url))
        #expect(failure == error)
        #expect(failure.statusCode == 503)
        #expect(list.failure(for: URL(string: "https://example.com/other.png")!) == nil)
    }
}
