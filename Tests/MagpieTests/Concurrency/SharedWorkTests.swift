import Foundation
import Synchronization
import Testing
@testable import MagpieCore

/// The shared-work primitive on its own: join, leave, cancel on the last leave, priority, progress.
struct SharedWorkTests {
    /// A gate the work waits at until the test opens it; a cancelled waiter is let through at once.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func wait() async {
            await withCheckedContinuation { continuation in
                let open = state.withLock { state -> Bool in
                    if !state.open { state.waiters.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }

        func open() {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Things the work saw, for the test to read.
    final class Record: Sendable {
        private let state = Mutex<(runs: Int, cancelled: Bool, escalatedTo: TaskPriority?, progress: [Int])>((0, false, nil, []))
        func ran() { state.withLock { $0.runs += 1 } }
        func sawCancel() { state.withLock { $0.cancelled = true } }
        func escalated(_ p: TaskPriority) { state.withLock { $0.escalatedTo = p } }
        func progress(_ bytes: Int) { state.withLock { $0.progress.append(bytes) } }
        var runs: Int { state.withLock { $0.runs } }
        var cancelled: Bool { state.withLock { $0.cancelled } }
        var escalatedTo: TaskPriority? { state.withLock { $0.escalatedTo } }
        var progressSeen: [Int] { state.withLock { $0.progress } }
    }

    struct Stopped: Error, Equatable, Sendable { let who: Int }

    @Test func callersOfOneKeyShareOneRunAndGetItsValue() async throws {
        let pool = SharedWork<String, Int>()
        let gate = Gate()
        let record = Record()
        let tasks = (0..<10).map { _ in
            Task {
                try await pool.value(for: "k") { _ in
                    record.ran()
                    await gate.wait()
                    return 42
                }
            }
        }
        try await waitUntil { pool.callerCount(for: "k") == 10 }
        gate.open()
        for task in tasks { #expect(try await task.value == 42) }
        #expect(record.runs == 1)
        #expect(pool.startedCount == 1)
        #expect(pool.joinedCount == 9)
        #expect(pool.runningCount == 0)
    }

    @Test func differentKeysRunSeparately() async throws {
        let pool = SharedWork<String, String>()
        async let a = pool.value(for: "a") { _ in "A" }
        async let b = pool.value(for: "b") { _ in "B" }
        #expect(try await [a, b] == ["A", "B"])
        #expect(pool.startedCount == 2)
        #expect(pool.joinedCount == 0)
    }

    @Test func aCallerThatCancelsLeavesAloneAndTheOthersStillGetTheValue() async throws {
        let pool = SharedWork<String, Int>()
        let gate = Gate()
        let record = Record()
        let work: SharedWork<String, Int>.Work = { _ in
            record.ran()
            await gate.wait()
            if Task.isCancelled { record.sawCancel() }
            return 7
        }
        let leaver = Task { try await pool.value(for: "k", cancellationError: Stopped(who: 1), work: work) }
        let stayer = Task { try await pool.value(for: "k", cancellationError: Stopped(who: 2), work: work) }
        try await waitUntil { pool.callerCount(for: "k") == 2 }
        leaver.cancel()
        // Answered at once, while the work is still held at the gate.
        await #expect(throws: Stopped(who: 1)) { try await leaver.value }
        #expect(pool.callerCount(for: "k") == 1)
        gate.open()
        #expect(try await stayer.value == 7)
        #expect(record.runs == 1)
        #expect(!record.cancelled)
    }

    @Test func theWorkIsCancelledWhenItsLastCallerLeavesAndALaterCallerStartsAfresh() async throws {
        let pool = SharedWork<String, Int>()
        let record = Record()
        let cancelledWork = Gate()
        let work: SharedWork<String, Int>.Work = { _ in
            record.ran()
            do {
                try await Task.sleep(for: .seconds(60))
            } catch {
                record.sawCancel()
                cancelledWork.open()
                throw error
            }
            return 1
        }
        let first = Task { try await pool.value(for: "k", work: work) }
        let second = Task { try await pool.value(for: "k", work: work) }
        try await waitUntil { pool.callerCount(for: "k") == 2 }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(!record.cancelled)
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        await cancelledWork.wait()
        #expect(record.cancelled)
        #expect(pool.runningCount == 0)
        let fresh = try await pool.value(for: "k") { _ in 2 }
        #expect(fresh == 2)
        #expect(pool.startedCount == 2)
    }

    @Test func aCallerAlreadyCancelledIsAnsweredWithoutStartingWork() async throws {
        let pool = SharedWork<String, Int>()
        let record = Record()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.value(for: "k", cancellationError: Stopped(who: 3)) { _ in
                record.ran()
                return 1
            }
        }
        await #expect(throws: Stopped(who: 3)) { try await task.value }
        #expect(record.runs == 0)
        #expect(pool.startedCount == 0)
    }

    @Test func aHigherPriorityCallerJoiningRaisesTheWork() async throws {
        let pool = SharedWork<String, Int>()
        let gate = Gate()
        let record = Record()
        let escalated = Gate()
        let work: SharedWork<String, Int>.Work = { _ in
            await withTaskPriorityEscalationHandler {
                await gate.wait()
            } onPriorityEscalated: { _, raised in
                record.escalated(raised)
                escalated.open()
            }
            return Int(Task.currentPriority.rawValue)
        }
        let low = Task(priority: .low) { try await pool.value(for: "k", work: work) }
        try await waitUntil { pool.callerCount(for: "k") == 1 }
        #expect(pool.priority(for: "k") == .low)
        let high = Task(priority: .high) { try await pool.value(for: "k", work: work) }
        try await waitUntil { pool.callerCount(for: "k") == 2 }
        #expect(pool.priority(for: "k") == .high)
        await escalated.wait()
        #expect(record.escalatedTo == .high)
        gate.open()
        let ranAt = try await low.value
        #expect(try await high.value == ranAt)
        #expect(ranAt >= Int(TaskPriority.high.rawValue))
    }

    @Test func aLowerPriorityCallerJoiningLeavesThePriorityAlone() async throws {
        let pool = SharedWork<String, Int>()
        let gate = Gate()
        let high = Task(priority: .high) { try await pool.value(for: "k") { _ in await gate.wait(); return 1 } }
        try await waitUntil { pool.callerCount(for: "k") == 1 }
        let low = Task(priority: .low) { try await pool.value(for: "k") { _ in 2 } }
        try await waitUntil { pool.callerCount(for: "k") == 2 }
        #expect(pool.priority(for: "k") == .high)
        gate.open()
        #expect(try await [high.value, low.value] == [1, 1])
    }

    @Test func aWaitingCallerThatIsEscalatedRaisesTheWorkItWaitsFor() async throws {
        let pool = SharedWork<String, Int>()
        let gate = Gate()
        let escalated = Gate()
        let record = Record()
        let caller = Task(priority: .low) {
            try await pool.value(for: "k") { _ in
                await withTaskPriorityEscalationHandler {
                    await gate.wait()
                } onPriorityEscalated: { _, raised in
                    record.escalated(raised)
                    escalated.open()
                }
                return 1
            }
        }
        try await waitUntil { pool.callerCount(for: "k") == 1 }
        caller.escalatePriority(to: .high)
        await escalated.wait()
        #expect(record.escalatedTo == .high)
        #expect(pool.priority(for: "k") == .high)
        gate.open()
        #expect(try await caller.value == 1)
    }

    @Test func progressReachesEveryCurrentCaller() async throws {
        let pool = SharedWork<String, Int>()
        let start = Gate()
        let seen = (0..<3).map { _ in Record() }
        let work: SharedWork<String, Int>.Work = { progress in
            await start.wait()
            progress.report(DownloadProgress(receivedBytes: 10, expectedBytes: 20))
            progress.report(DownloadProgress(receivedBytes: 20, expectedBytes: 20), final: true)
            return 0
        }
        let tasks = seen.map { record in
            Task { try await pool.value(for: "k", progress: { record.progress($0.receivedBytes) }, work: work) }
        }
        try await waitUntil { pool.callerCount(for: "k") == 3 }
        start.open()
        for task in tasks { _ = try await task.value }
        for record in seen { #expect(record.progressSeen == [10, 20]) }
    }

    @Test func progressIsThrottledToTheIntervalButTheFinalReportAlwaysGoesOut() async throws {
        let pool = SharedWork<String, Int>(progressInterval: .seconds(3600))
        let record = Record()
        _ = try await pool.value(for: "k", progress: { record.progress($0.receivedBytes) }) { progress in
            for bytes in 1...5 { progress.report(DownloadProgress(receivedBytes: bytes, expectedBytes: 6)) }
            progress.report(DownloadProgress(receivedBytes: 6, expectedBytes: 6), final: true)
            return 0
        }
        #expect(record.progressSeen == [1, 6])
    }

    @Test func theWorksErrorReachesEveryCaller() async throws {
        let pool = SharedWork<String, Int>()
        let gate = Gate()
        let work: SharedWork<String, Int>.Work = { _ in
            await gate.wait()
            throw Stopped(who: 9)
        }
        let a = Task { try await pool.value(for: "k", work: work) }
        let b = Task { try await pool.value(for: "k", work: work) }
        try await waitUntil { pool.callerCount(for: "k") == 2 }
        gate.open()
        await #expect(throws: Stopped(who: 9)) { try await a.value }
        await #expect(throws: Stopped(who: 9)) { try await b.value }
        #expect(pool.runningCount == 0)
    }
}
