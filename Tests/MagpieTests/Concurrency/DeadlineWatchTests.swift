import Synchronization
import Testing
@testable import MagpieCore

/// The shared timer behind download timeouts and the server's deadlines: late runs are cancelled and answer nil, the
/// rest keep their results, answers go out at their limit, alarms go off once unless disarmed, and the timer ends when
/// nothing is watched.
@Suite(.timeLimit(.minutes(1)))
struct DeadlineWatchTests {
    struct Failure: Error, Equatable {}

    /// A limit no run of these tests reaches even when the whole suite, run in parallel on two cores, keeps a task
    /// waiting for minutes (the full suite once made a 30 s limit strike a run that throws at once).
    static let ample = Duration.seconds(3600)

    /// Waits until cancelled, then throws `CancellationError` (as a download does when its task is cancelled).
    static func waitForCancellation() async throws -> Int {
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }

    /// Polls `condition` for up to ten seconds; the timer ends on its own schedule, not the test's.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1_000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test func aRunWithinItsLimitKeepsItsValueAndTheTimerEnds() async throws {
        let watch = DeadlineWatch()
        let value = try await watch.run(within: Self.ample) { 42 }
        #expect(value == 42)
        #expect(watch.watchedCount == 0)
        // The timer slept until the hour's deadline; it ends only once woken. A later short run wakes it sooner.
        _ = try await watch.run(within: .milliseconds(20)) { try await Self.waitForCancellation() }
        #expect(await Self.eventually { !watch.timerRunning })
    }

    @Test func aRunPastItsLimitIsCancelledAndAnswersNil() async throws {
        let watch = DeadlineWatch()
        let value = try await watch.run(within: .milliseconds(50)) { try await Self.waitForCancellation() }
        #expect(value == nil)
        #expect(watch.watchedCount == 0)
    }

    @Test func anErrorOfTheRunItselfIsThrown() async {
        let watch = DeadlineWatch()
        await #expect(throws: Failure.self) {
            _ = try await watch.run(within: Self.ample) { () async throws -> Int in throw Failure() }
        }
        #expect(watch.watchedCount == 0)
    }

    @Test func anEarlierDeadlineWatchedLaterStillStrikesFirst() async throws {
        let watch = DeadlineWatch()
        let release = Mutex(false)
        async let long = watch.run(within: Self.ample) { () async throws -> Int in
            while !release.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            return 7
        }
        // The long run's timer sleeps for an hour; the short one must not wait for it.
        #expect(await Self.eventually { watch.watchedCount == 1 })
        let short = try await watch.run(within: .milliseconds(30)) { try await Self.waitForCancellation() }
        #expect(short == nil)
        #expect(watch.watchedCount == 1)
        release.withLock { $0 = true }
        #expect(try await long == 7)
    }

    @Test func cancellingTheCallerCancelsTheRunWithoutCallingItLate() async throws {
        let watch = DeadlineWatch()
        let caller = Task { try await watch.run(within: Self.ample) { try await Self.waitForCancellation() } }
        #expect(await Self.eventually { watch.watchedCount == 1 })
        caller.cancel()
        await #expect(throws: CancellationError.self) { _ = try await caller.value }
        #expect(watch.watchedCount == 0)
    }

    @Test func manyRunsAtOnceEachGetTheirOwnVerdict() async throws {
        let watch = DeadlineWatch()
        let verdicts = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
            for i in 0..<64 {
                group.addTask {
                    // Even runs finish at once under a long limit; odd runs wait past a short one.
                    if i.isMultiple(of: 2) { return (i, try await watch.run(within: Self.ample) { i }) }
                    return (i, try await watch.run(within: .milliseconds(10 + i)) { try await Self.waitForCancellation() })
                }
            }
            return try await group.reduce(into: [Int: Int?]()) { $0[$1.0] = $1.1 }
        }
        for i in 0..<64 {
            #expect(verdicts[i] == (i.isMultiple(of: 2) ? i : nil), "run \(i)")
        }
        #expect(watch.watchedCount == 0)
    }

    @Test func aLimitBeyondAYearIsNoLimit() async throws {
        let watch = DeadlineWatch()
        #expect(try await watch.run(within: .seconds(Int64.max)) { 5 } == 5)
        #expect(!watch.timerRunning)
    }

    @Test func anAnswerPastItsLimitGoesOutAtTheLimitWithoutWaitingForTheWork() async throws {
        let watch = DeadlineWatch()
        let release = Mutex(false)
        let finished = Mutex(false)
        // Work that never looks at its cancellation: the answer must not wait for it.
        let value = try await watch.answer(within: .milliseconds(50)) { () async throws -> Int in
            while !release.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            finished.withLock { $0 = true }
            return 1
        }
        #expect(value == nil)
        #expect(!finished.withLock { $0 })
        #expect(watch.watchedCount == 0)
        release.withLock { $0 = true }
        #expect(await Self.eventually { finished.withLock { $0 } })
    }

    @Test func anAnswerWithinItsLimitIsTheWorksValueOrError() async throws {
        let watch = DeadlineWatch()
        #expect(try await watch.answer(within: Self.ample) { 9 } == 9)
        await #expect(throws: Failure.self) {
            _ = try await watch.answer(within: Self.ample) { () async throws -> Int in throw Failure() }
        }
        #expect(watch.watchedCount == 0)
        #expect(try await watch.answer(within: .seconds(Int64.max)) { 3 } == 3)
    }

    @Test func anAlarmGoesOffOnceAtItsDeadlineUnlessDisarmedFirst() async throws {
        let watch = DeadlineWatch()
        let fired = Mutex([String]())
        let armed = ContinuousClock.now
        let kept = watch.arm(until: armed.advanced(by: .milliseconds(30))) { fired.withLock { $0.append("kept") } }
        // Disarmed in the next statement, with no suspension between: long before its deadline.
        let dropped = watch.arm(until: armed.advanced(by: .seconds(1))) { fired.withLock { $0.append("dropped") } }
        #expect(watch.disarm(dropped))
        #expect(await Self.eventually { !fired.withLock { $0 }.isEmpty })
        #expect(!watch.disarm(kept))
        try await Task.sleep(until: armed.advanced(by: .milliseconds(1200)), clock: .continuous)
        #expect(fired.withLock { $0 } == ["kept"])
        #expect(watch.watchedCount == 0)
    }
}
