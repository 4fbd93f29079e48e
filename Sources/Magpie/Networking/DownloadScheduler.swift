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

    private struct Waiter {
        let id: UInt64
        let host: String
        var priority: Double
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var runningPerHost: [String: Int] = [:]
        // A plain array: queues are at most a few thousand long, and a release scans it once
        // to honour both priority and the per-host limit (a heap cannot skip full hosts cheaply).
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0

        func canRun(host: String, maximumTotal: Int, maximumPerHost: Int) -> Bool {
            running < maximumTotal && runningPerHost[host, default: 0] < maximumPerHost
        }

        mutating func start(host: String) {
            running += 1
            runningPerHost[host, default: 0] += 1
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
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
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
                    state.waiters.append(Waiter(id: id, host: host, priority: priority, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
        return Slot(host: host)
    }

    /// Gives a slot back and starts the best waiting callers that now fit.
    func release(_ slot: Slot) {
        let started = state.withLock { state -> [Waiter] in
            state.running -= 1
            state.runningPerHost[slot.host, default: 1] -= 1
            if state.runningPerHost[slot.host] == 0 { state.runningPerHost[slot.host] = nil }
            var started: [Waiter] = []
            while let index = bestRunnableWaiter(in: state) {
                let waiter = state.waiters.remove(at: index)
                state.start(host: waiter.host)
                started.append(waiter)
            }
            return started
        }
        for waiter in started { waiter.continuation.resume() }
    }

    /// Callers waiting for a slot.
    var queuedCount: Int { state.withLock { $0.waiters.count } }

    /// Downloads holding a slot.
    var runningCount: Int { state.withLock { $0.running } }

    private func bestRunnableWaiter(in state: State) -> Int? {
        guard state.running < maximumTotal else { return nil }
        var best: Int?
        for index in state.waiters.indices
        where state.runningPerHost[state.waiters[index].host, default: 0] < maximumPerHost {
            // Strictly greater keeps the earliest of equal priorities.
            if let current = best, state.waiters[index].priority <= state.waiters[current].priority { continue }
            best = index
        }
        return best
    }
}
