import Synchronization

/// Runs work under time limits with one timer for all of it. A timer per run (a sleeping task beside each download)
/// costs a dispatch timer, a wake-up of dispatch's timer thread and a cancellation per run: about 6 % of a loopback
/// download's CPU, measured with perf. Here a run only registers its deadline; one timer task sleeps until the earliest
/// deadline, cancels what is late, and ends when nothing is registered.
package final class DeadlineWatch: Sendable {
    private struct Watched {
        let deadline: ContinuousClock.Instant
        let cancel: @Sendable () -> Void
    }

    private struct State {
        var watched: [UInt64: Watched] = [:]
        var nextID: UInt64 = 0
        /// The timer task and the deadline it sleeps until; nil when no timer runs.
        var timer: (task: Task<Void, Never>, wake: ContinuousClock.Instant)?
        /// Counts timers started, so a timer that was replaced knows it was.
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Runs `operation` in a new task that is cancelled when it is still running at `limit` from now.
    ///
    /// - Returns: What `operation` returned, or nil when the limit cancelled it first.
    /// - Throws: What `operation` threw, unless the limit cancelled it (then nil is returned).
    package func run<T: Sendable>(within limit: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
        // A limit beyond a year means none (and its deadline could overflow the clock).
        guard limit <= .seconds(365 * 86_400) else { return try await operation() }
        // Its own task: the limit cancels the run, not the caller's task (which may retry).
        let work = Task { try await operation() }
        let id = watch(until: ContinuousClock.now.advanced(by: limit), cancel: { work.cancel() })
        let result = await withTaskCancellationHandler {
            await work.result
        } onCancel: {
            work.cancel()
        }
        let cancelledByLimit = !unwatch(id)
        // A run that finished as the limit struck keeps its result.
        if case .success(let value) = result { return value }
        if cancelledByLimit { return nil }
        return try result.get()
    }

    /// Number of runs being watched (for tests).
    package var watchedCount: Int { state.withLock { $0.watched.count } }

    /// Whether a timer task is running (for tests: it ends when nothing is watched).
    package var timerRunning: Bool { state.withLock { $0.timer != nil } }

    private func watch(until deadline: ContinuousClock.Instant, cancel: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.watched[id] = Watched(deadline: deadline, cancel: cancel)
            // Most runs share one timeout, so a new deadline is rarely the earliest: the running timer serves it.
            if let timer = state.timer, timer.wake <= deadline { return id }
            state.timer?.task.cancel()
            startTimer(until: deadline, in: &state)
            return id
        }
    }

    /// Stops watching `id`; false when the limit already cancelled it.
    private func unwatch(_ id: UInt64) -> Bool {
        state.withLock { $0.watched.removeValue(forKey: id) != nil }
    }

    private func startTimer(until wake: ContinuousClock.Instant, in state: inout State) {
        state.generation += 1
        let generation = state.generation
        let task = Task(priority: .high) { [weak self] in
            var wake = wake
            while true {
                do {
                    try await Task.sleep(until: wake, tolerance: .milliseconds(1), clock: .continuous)
                } catch {
                    return  // replaced by a timer with an earlier deadline
                }
                guard let self, let next = self.expire(generation: generation) else { return }
                wake = next
            }
        }
        state.timer = (task, wake)
    }

    /// Cancels every run past its deadline. Returns the next deadline to sleep until, or nil when this timer ends
    /// (nothing left to watch, or another timer took over).
    private func expire(generation: UInt64) -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        let (late, next): ([Watched], ContinuousClock.Instant?) = state.withLock { state in
            guard state.generation == generation else { return ([], nil) }
            var lateIDs: [UInt64] = []
            var earliest: ContinuousClock.Instant?
            for (id, watched) in state.watched {
                if watched.deadline <= now {
                    lateIDs.append(id)
                } else if earliest.map({ watched.deadline < $0 }) ?? true {
                    earliest = watched.deadline
                }
            }
            let late = lateIDs.compactMap { state.watched.removeValue(forKey: $0) }
            if let earliest {
                state.timer?.wake = earliest
            } else {
                state.timer = nil
            }
            return (late, earliest)
        }
        // Outside the lock: cancelling runs the work's cancellation handlers.
        for watched in late { watched.cancel() }
        return next
    }
}
