import MagpieCore
import HeapModule
import Synchronization

/// Hands out download slots: at most `maximumTotal` at once and `maximumPerHost` per host.
/// Callers over the limits wait (they are never failed); a freed slot goes to the waiting
/// caller with the highest priority whose host is under its limit, first come first served
/// among equal priorities.
final class DownloadScheduler: Sendable {
    /// Proof of a held slot; give it back with `release`.
    struct Slot: Sendable {
        let host: String
    }

    /// A place in a host's queue: the highest priority is the maximum, then the earliest.
    private typealias Ticket = QueueTicket<Double>

    private struct Waiter {
        let host: String
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var runningPerHost: [String: Int] = [:]
        // One heap per host, so a release looks at the head of each waiting host instead of scanning every waiter
        // (it did: 8 % of a 1,000-image download run went to that scan). A cancelled waiter leaves its ticket behind;
        // tickets without a waiter are dropped when they reach the top.
        var queues: [String: Heap<Ticket>] = [:]
        var waiters: [UInt64: Waiter] = [:]
        /// The current priority of each waiting ticket (raised by `raise`).
        var priorities: [UInt64: Double] = [:]
        /// Live waiters per host: a host's heap is rebuilt when cancelled tickets outnumber them, so a stream of
        /// cancelled low-priority requests behind a busy high-priority one cannot pile up.
        var waitingPerHost: [String: Int] = [:]
        var nextID: UInt64 = 0

        func canRun(host: String, maximumTotal: Int, maximumPerHost: Int) -> Bool {
            running < maximumTotal && runningPerHost[host, default: 0] < maximumPerHost
        }

        mutating func start(host: String) {
            running += 1
            runningPerHost[host, default: 0] += 1
        }

        /// Removes and returns the best waiter whose host is under its limit, if the total allows one.
        mutating func popBestRunnable(maximumTotal: Int, maximumPerHost: Int) -> Waiter? {
            guard running < maximumTotal else { return nil }
            var best: (host: String, ticket: Ticket)?
            for host in Array(queues.keys) where runningPerHost[host, default: 0] < maximumPerHost {
                guard let top = liveTop(of: host) else { continue }
                if let current = best, top <= current.ticket { continue }
                best = (host, top)
            }
            guard let best else { return nil }
            _ = queues[best.host]?.popMax()
            if queues[best.host]?.isEmpty == true { queues[best.host] = nil }
            return take(best.ticket.id)
        }

        /// Removes waiter `id` (started or cancelled) and keeps the host's heap at most about twice its live waiters.
        mutating func take(_ id: UInt64) -> Waiter? {
            guard let waiter = waiters.removeValue(forKey: id) else { return nil }
            priorities[id] = nil
            let live = (waitingPerHost[waiter.host] ?? 1) - 1
            waitingPerHost[waiter.host] = live > 0 ? live : nil
            if let heap = queues[waiter.host], heap.count > 2 * live + 16 {
                let kept = heap.unordered.filter { waiters[$0.id] != nil }
                queues[waiter.host] = kept.isEmpty ? nil : Heap(kept)
            }
            return waiter
        }

        /// The host's best ticket that still has a waiter, dropping cancelled ones above it.
        private mutating func liveTop(of host: String) -> Ticket? {
            while let top = queues[host]?.max {
                if waiters[top.id] != nil { return top }
                _ = queues[host]?.popMax()
            }
            queues[host] = nil
            return nil
        }
    }

    let maximumTotal: Int
    let maximumPerHost: Int
    private let state = Mutex(State())

    init(maximumTotal: Int, maximumPerHost: Int) {
        self.maximumTotal = max(1, maximumTotal)
        self.maximumPerHost = max(1, maximumPerHost)
    }

    /// Waits for a slot. Throws `CancellationError` when the task is cancelled while waiting.
    func acquire(host: String, priority: Double) async throws -> Slot {
        // A NaN would break the heap's ordering (ImageDownloadOptions.priority is public and unclamped).
        let priority = priority.isNaN ? 0.5 : min(1, max(0, priority))
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        // The download is shared work: when a higher-priority caller joins it, its task is escalated, and the
        // queued ticket moves up with it.
        try await withTaskPriorityEscalationHandler {
            try await wait(id: id, host: host, priority: priority)
        } onPriorityEscalated: { _, raised in
            self.raise(id, to: raised.downloadPriority)
        }
        return Slot(host: host)
    }

    /// Queues ticket `id` (unless a slot is free now) and waits for its slot.
    private func wait(id: UInt64, host: String, priority: Double) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checking cancellation inside the lock closes the race with onCancel: either
                // this sees the flag, or onCancel runs later and finds the waiter.
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    // Waiters left after a release are all blocked by a limit, so a caller that
                    // fits now may start ahead of them without being unfair.
                    if state.canRun(host: host, maximumTotal: maximumTotal, maximumPerHost: maximumPerHost) {
                        state.start(host: host)
                        return .success(())
                    }
                    state.waiters[id] = Waiter(host: host, continuation: continuation)
                    state.priorities[id] = priority
                    state.waitingPerHost[host, default: 0] += 1
                    state.queues[host, default: Heap()].insert(Ticket(priority: priority, id: id))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.take(id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves waiting ticket `id` up to `priority` (never down). The old ticket stays in the heap without
    /// effect: whichever of the two reaches the top first starts the waiter, the other is dropped as cancelled.
    func raise(_ id: UInt64, to priority: Double) {
        state.withLock { state in
            guard let waiter = state.waiters[id], let current = state.priorities[id], priority > current else { return }
            state.priorities[id] = priority
            state.queues[waiter.host, default: Heap()].insert(Ticket(priority: priority, id: id))
        }
    }

    /// The priorities of the waiting tickets now, highest first (for tests).
    var waitingPriorities: [Double] { state.withLock { $0.priorities.values.sorted(by: >) } }

    /// Gives a slot back and starts the best waiting callers that now fit.
    func release(_ slot: Slot) {
        let started = state.withLock { state -> [Waiter] in
            state.running -= 1
            state.runningPerHost[slot.host, default: 1] -= 1
            if state.runningPerHost[slot.host] == 0 { state.runningPerHost[slot.host] = nil }
            var started: [Waiter] = []
            while let waiter = state.popBestRunnable(maximumTotal: maximumTotal, maximumPerHost: maximumPerHost) {
                state.start(host: waiter.host)
                started.append(waiter)
            }
            return started
        }
        for waiter in started { waiter.continuation.resume() }
    }

    /// Callers waiting for a slot.
    var queuedCount: Int { state.withLock { $0.waiters.count } }

    /// Tickets held in the hosts' heaps, cancelled ones not yet dropped included (for tests).
    var ticketCount: Int { state.withLock { $0.queues.values.reduce(0) { $0 + $1.count } } }

    /// Downloads holding a slot.
    var runningCount: Int { state.withLock { $0.running } }
}
