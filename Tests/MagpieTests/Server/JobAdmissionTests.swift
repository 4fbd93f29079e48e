import Synchronization
import Testing

@testable import MagpieCore
@testable import MagpieServer

/// Load shedding: past workers and queue a job is refused at once, a job still waiting at its timeout gives up, and a
/// job that got its worker is never cut by that timeout.
// The limit only catches a hang: the whole suite on two cores can keep a test's tasks waiting for a long time.
@Suite(.timeLimit(.minutes(5)))
struct JobAdmissionTests {
    static func eventually(_ condition: () -> Bool) async -> Bool { await DeadlineWatchTests.eventually(condition) }

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

    /// The wait a job reported.
    final class WaitRecord: Sendable {
        private let value = Mutex<Duration?>(nil)
        var wait: Duration? { value.withLock { $0 } }
        func record(_ wait: Duration) { value.withLock { $0 = wait } }
    }

    /// Runs `body` while the admission's one worker is held by a job, then frees the worker and checks that job ends.
    @discardableResult
    func withWorkerHeld<T: Sendable>(queueLength: Int, _ body: @Sendable (JobAdmission) async throws -> T) async throws -> T {
        let admission = JobAdmission(workers: 1, queueLength: queueLength, deadlines: DeadlineWatch())
        let gate = Gate()
        let holder = Task { try await admission.run(timeout: DeadlineWatchTests.ample) { try await gate.hold() } }
        #expect(await Self.eventually { gate.entered })
        let result: Result<T, any Error>
        do { result = .success(try await body(admission)) } catch { result = .failure(error) }
        gate.release()
        #expect(try await holder.value == "held")
        return try result.get()
    }

    @Test func aJobStillWaitingAtItsTimeoutGivesUpAndTheRunningOneGoesOn() async throws {
        let ran = Mutex(false)
        try await withWorkerHeld(queueLength: 1) { admission in
            await #expect(throws: JobAdmission.Refusal.waitedTooLong) {
                try await admission.run(timeout: .milliseconds(50)) { ran.withLock { $0 = true } }
            }
            #expect(admission.waiting == 0)
        }
        // The given-up job never runs, even once the worker is free.
        try await Task.sleep(for: .milliseconds(50))
        #expect(!ran.withLock { $0 })
    }

    @Test func aJobThatGotItsWorkerIsNeverCutByItsTimeout() async throws {
        let admission = JobAdmission(workers: 1, queueLength: 0, deadlines: DeadlineWatch())
        let gate = Gate()
        let ended = Mutex(false)
        let called = ContinuousClock.now
        let job = Task {
            defer { ended.withLock { $0 = true } }
            return try await admission.run(timeout: .milliseconds(200)) { try await gate.hold() }
        }
        // The worker is free, so the job normally has it at once; a machine busy enough to keep it waiting past the
        // timeout gives it up before it starts, which is right too, and checked.
        #expect(await Self.eventually { gate.entered || ended.withLock { $0 } })
        guard gate.entered else {
            await #expect(throws: JobAdmission.Refusal.waitedTooLong) { try await job.value }
            return
        }
        try await Task.sleep(until: called.advanced(by: .milliseconds(400)), clock: .continuous)
        gate.release()
        #expect(try await job.value == "held")
    }

    @Test func pastWorkersAndQueueAJobIsRefusedAtOnce() async throws {
        try await withWorkerHeld(queueLength: 0) { admission in
            await #expect(throws: JobAdmission.Refusal.overloaded) {
                try await admission.run(timeout: DeadlineWatchTests.ample) { "never" }
            }
        }
    }

    @Test func aWaitingJobRunsWhenAWorkerFreesInTimeAndReportsItsWait() async throws {
        let waited = WaitRecord()
        let queued = try await withWorkerHeld(queueLength: 1) { admission in
            let queued = Task { try await admission.run(timeout: DeadlineWatchTests.ample, queued: waited.record) { "queued" } }
            #expect(await Self.eventually { admission.waiting == 1 })
            try await Task.sleep(for: .milliseconds(30))
            return queued
        }
        #expect(try await queued.value == "queued")
        #expect((waited.wait ?? .zero) >= .milliseconds(30))
    }
}
