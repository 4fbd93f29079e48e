import Synchronization

/// Runs work under time limits with one timer for all of it. A timer per run (a sleeping task beside each download)
/// costs a dispatch timer, a wake-up of dispatch's timer thread and a cancellation per run: about 6 % of a loopback
/// download's CPU, measured with perf. Here a run only registers its deadline; one timer task sleeps until the earliest
/// deadline, cancels what is late, and ends when nothing is registered.
///
/// Three shapes share it: ``run(within:_:)`` (the caller waits for the cancelled work: a download attempt, whose
/// caller may retry), ``answer(within:_:)`` (the caller is answered at the limit and the work winds down after: a
/// server's processing deadline) and ``arm(until:_:)`` (any other action at a deadline: a job that gives up waiting
/// for a worker).
package final class DeadlineWatch: Sendable {
    /// A deadline registered with ``arm(until:_:)``; give it back with ``disarm(_:)``.
    package struct Alarm: Sendable {
        fileprivate let id: UInt64
    }

    private struct Watched {
        let deadline: ContinuousClock.Instant
        /// What happens at the deadline (cancelling a run, answering a caller, giving up a job).
        let expire: @Sendable () -> Void
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
        guard let deadline = Self.deadline(after: limit) else { return try await operation() }
        // Its own task: the limit cancels the run, not the caller's task (which may retry).
        let work = Task { try await operation() }
        let alarm = arm(until: deadline) { work.cancel() }
        let result = await withTaskCancellationHandler {
            await work.result
        } onCancel: {
            work.cancel()
        }
        let cancelledByLimit = !disarm(alarm)
        // A run that finished as the limit struck keeps its result.
        if case .success(let value) = result { return value }
        if cancelledByLimit { return nil }
        return try result.get()
    }

    /// Runs `operation` in a new task and answers nil at `limit` from now when it has not finished by then: the task is
    /// cancelled, and the caller does not wait for it to notice (an answer that must go out on time; the work winds
    /// down after).
    ///
    /// - Returns: What `operation` returned, or nil at the limit.
    /// - Throws: What `operation` threw before the limit.
    package func answer<T: Sendable>(within limit: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
        guard let deadline = Self.deadline(after: limit) else { return try await operation() }
        let first = FirstAnswer<T?>()
        let work = Task {
            do {
                first.give(.success(try await operation()))
            } catch {
                first.give(.failure(error))
            }
        }
        let alarm = arm(until: deadline) {
            work.cancel()
            first.give(.success(nil))
        }
        defer { disarm(alarm) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { first.wait(with: $0) }
        } onCancel: {
            work.cancel()
        }
    }

    /// Calls `expire` once at `deadline`, on the watch's timer task, unless ``disarm(_:)`` comes first. `expire` must
    /// be short (it runs between the expiries of others).
    package func arm(until deadline: ContinuousClock.Instant, _ expire: @escaping @Sendable () -> Void) -> Alarm {
        Alarm(id: watch(until: deadline, expire: expire))
    }

    /// Disarms `alarm`; false when it has gone off already.
    @discardableResult
    package func disarm(_ alarm: Alarm) -> Bool { unwatch(alarm.id) }

    /// The instant `limit` from now; nil for a limit beyond a year, which means none (and could overflow the clock).
    package static func deadline(after limit: Duration) -> ContinuousClock.Instant? {
        limit <= .seconds(365 * 86_400) ? ContinuousClock.now.advanced(by: limit) : nil
    }

    /// Number of runs being watched (for tests).
    package var watchedCount: Int { state.withLock { $0.watched.count } }

    /// Whether a timer task is running (for tests: it ends when nothing is watched).
    package var timerRunning: Bool { state.withLock { $0.timer != nil } }

    private func watch(until deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.watched[id] = Watched(deadline: deadline, expire: expire)
            // Most runs share one timeout, so a new deadline is rarely the earliest: the running timer serves it.
            if let timer = state.timer, timer.wake <= deadline { return id }
            state.timer?.task.cancel()
            startTimer(until: deadline, in: &state)
            return id
        }
    }

    /// Stops watching `id`; false when its deadline has already passed (and its action run).
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

    /// Runs the action of everything past its deadline. Returns the next deadline to sleep until, or nil when this
    /// timer ends (nothing left to watch, or another timer took over).
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
        // Outside the lock: cancelling a run runs its cancellation handlers.
        for watched in late { watched.expire() }
        return next
    }
}

/// One answer for a caller, from whichever of two racers gives it first (the other's is dropped), whether it comes
/// before or after the caller waits.
private final class FirstAnswer<T: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<T, any Error>)
        case given(Result<T, any Error>)
        case done
    }

    private let state = Mutex(State.empty)

    func wait(with continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = state.withLock { state in
            if case .given(let result) = state {
                state = .done
                return result
            }
            state = .waiting(continuation)
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func give(_ result: Result<T, any Error>) {
        let waiting: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .empty:
                state = .given(result)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .given, .done:
                return nil
            }
        }
        waiting?.resume(with: result)
    }
}
