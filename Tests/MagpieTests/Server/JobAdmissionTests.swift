import Synchronization
import Testing

@testable import MagpieCore
@testable import MagpieServer

/// Load shedding: past workers and queue a job is refused at once, a job still waiting at its timeout gives up, and a
/// job that got its worker is never cut by that timeout.
@Suite(.timeLimit(.minutes(1)))
struct JobAdmissionTests {
    /// A job that holds its worker until released.
    final class Gate: Sendable {
        private let state = Mutex((entered: false, released: false))
        var entered: Bool { state.withLock { $0.entered } }
        func release() { state.withLock { $0.released = true } }

        func hold() async throws -> String {
            state.withLock { $0.entered = true }
            while !state.withLock({ $0.released }) { try await Task.sleep(for: .milliseconds(5)) }
            return "held"
        }
    }

    @Test func aJobStillWaitingAtItsTimeoutGivesUpAndTheRunningOneGoesOn() async throws {
        let admission = JobAdmission(workers: 1, queueLength: 1, deadlines: DeadlineWatch())
        let gate = Gate()
        async let running = admission.run(timeout: .seconds(30)) { try await gate.hold() }
        #expect(await DeadlineWatchTests.eventually { gate.entered })
        let ran = Mutex(false)
        await #expect(throws: JobAdmission.Refusal.waitedTooLong) {
            try await admission.run(timeout: .milliseconds(50)) { ran.withLock { $0 = true } }
        }
        #expect(admission.waiting == 0)
        gate.release()
        #expect(try await running == "held")
        // The given-up job never runs, even once the worker is free.
        try await Task.sleep(for: .milliseconds(50))
        #expect(!ran.withLock { $0 })
    }

    @Test func aJobThatGotItsWorkerIsNeverCutByItsTimeout() async throws {
        let admission = JobAdmission(workers: 1, queueLength: 0, deadlines: DeadlineWatch())
        let gate = Gate()
        let called = ContinuousClock.now
        // A second is ample for a free worker to take it, even on a loaded machine; the job then holds on past it.
        async let job = admission.run(timeout: .seconds(1)) { try await gate.hold() }
        #expect(await DeadlineWatchTests.eventually { gate.entered })
        try await Task.sleep(until: called.advanced(by: .milliseconds(1200)), clock: .continuous)
        gate.release()
        #expect(try await job == "held")
    }

    @Test func pastWorkersAndQueueAJobIsRefusedAtOnce() async throws {
        let admission = JobAdmission(workers: 1, queueLength: 0, deadlines: DeadlineWatch())
        let gate = Gate()
        async let running = admission.run(timeout: .seconds(30)) { try await gate.hold() }
        #expect(await DeadlineWatchTests.eventually { gate.entered })
        await #expect(throws: JobAdmission.Refusal.overloaded) {
            try await admission.run(timeout: .seconds(30)) { "never" }
        }
        gate.release()
        #expect(try await running == "held")
    }

    @Test func aWaitingJobRunsWhenAWorkerFreesInTimeAndReportsItsWait() async throws {
        let admission = JobAdmission(workers: 1, queueLength: 1, deadlines: DeadlineWatch())
        let gate = Gate()
        async let running = admission.run(timeout: .seconds(30)) { try await gate.hold() }
        #expect(await DeadlineWatchTests.eventually { gate.entered })
        let waited = Mutex<Duration?>(nil)
        async let queued = admission.run(timeout: .seconds(30), queued: { wait in waited.withLock { $0 = wait } }) { "queued" }
        #expect(await DeadlineWatchTests.eventually { admission.waiting == 1 })
        try await Task.sleep(for: .milliseconds(30))
        gate.release()
        #expect(try await running == "held")
        #expect(try await queued == "queued")
        #expect((waited.withLock { $0 } ?? .zero) >= .milliseconds(30))
    }
}
