import Foundation
import Synchronization
import Testing
@testable import Magpie
@testable import MagpieCore

/// The slot scheduler on its own: which waiter a freed slot goes to, and what a cancelled waiter leaves behind.
struct DownloadSchedulerTests {
    /// Names in the order their `acquire` returned.
    final class StartOrder: Sendable {
        private let names = Mutex<[String]>([])
        func append(_ name: String) { names.withLock { $0.append(name) } }
        var all: [String] { names.withLock { $0 } }
    }

    /// Starts a task that waits for a slot and records `name` when it gets one; returns once the task is queued.
    @discardableResult
    func enqueue(
        _ name: String, host: String, priority: Double, on scheduler: DownloadScheduler, order: StartOrder
    ) async throws -> Task<DownloadScheduler.Slot, any Error> {
        let queued = scheduler.queuedCount
        let task = Task {
            let slot = try await scheduler.acquire(host: host, priority: priority)
            order.append(name)
            return slot
        }
        try await waitUntil { scheduler.queuedCount == queued + 1 }
        return task
    }

    @Test func aFreedSlotGoesToTheHighestPriorityThenTheEarliest() async throws {
        let scheduler = DownloadScheduler(maximumTotal: 1, maximumPerHost: 1)
        let order = StartOrder()
        let first = try await scheduler.acquire(host: "a", priority: 0.5)
        for (name, priority) in [("low", 0.1), ("high", 0.9), ("mid", 0.5), ("high2", 0.9)] {
            try await enqueue(name, host: "a", priority: priority, on: scheduler, order: order)
        }
        scheduler.release(first)
        for started in 1...4 {
            try await waitUntil { order.all.count == started }
            scheduler.release(DownloadScheduler.Slot(host: "a"))
        }
        #expect(order.all == ["high", "high2", "mid", "low"])
        #expect(scheduler.queuedCount == 0)
    }

    @Test func aHostAtItsLimitIsPassedOverForAnotherHost() async throws {
        let scheduler = DownloadScheduler(maximumTotal: 2, maximumPerHost: 1)
        let order = StartOrder()
        _ = try await scheduler.acquire(host: "a", priority: 0.5)
        let b = try await scheduler.acquire(host: "b", priority: 0.5)
        let waiting = try await enqueue("a-high", host: "a", priority: 0.9, on: scheduler, order: order)
        try await enqueue("c-low", host: "c", priority: 0.1, on: scheduler, order: order)
        scheduler.release(b)
        try await waitUntil { order.all.count == 1 }
        #expect(order.all == ["c-low"])
        #expect(scheduler.queuedCount == 1)
        #expect(scheduler.runningCount == 2)
        waiting.cancel()
        _ = try? await waiting.value
    }

    @Test func cancelledTicketsBehindABusyHostDoNotPileUp() async throws {
        let scheduler = DownloadScheduler(maximumTotal: 1, maximumPerHost: 1)
        let order = StartOrder()
        _ = try await scheduler.acquire(host: "a", priority: 0.5)
        // One high-priority waiter stays on top; 200 low-priority ones queue behind it and are cancelled.
        let top = try await enqueue("top", host: "a", priority: 0.9, on: scheduler, order: order)
        for index in 0..<200 {
            let task = try await enqueue("low\(index)", host: "a", priority: 0.1, on: scheduler, order: order)
            task.cancel()
            _ = try? await task.value
        }
        #expect(scheduler.queuedCount == 1)
        #expect(scheduler.ticketCount <= 2 * 1 + 16 + 1)
        top.cancel()
        _ = try? await top.value
    }

    @Test func aCancelledWaiterFailsAtOnceAndTheSlotGoesToTheNext() async throws {
        let scheduler = DownloadScheduler(maximumTotal: 1, maximumPerHost: 1)
        let order = StartOrder()
        let held = try await scheduler.acquire(host: "a", priority: 0.5)
        let cancelled = try await enqueue("cancelled", host: "a", priority: 0.9, on: scheduler, order: order)
        try await enqueue("next", host: "a", priority: 0.1, on: scheduler, order: order)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(scheduler.queuedCount == 1)
        scheduler.release(held)
        try await waitUntil { order.all.count == 1 }
        #expect(order.all == ["next"])
        #expect(scheduler.runningCount == 1 && scheduler.queuedCount == 0)
    }
}
