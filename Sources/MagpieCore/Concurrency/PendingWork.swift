import Synchronization

/// Work started in the background and not yet finished, with a way to wait for all of it, or for the work on one
/// key: the caches' fire-and-forget disk writes, which a process about to exit must not lose, and which a read of the
/// same key must not overtake (it waits, then finds the entry, rather than missing and fetching it again).
package final class PendingWork: Sendable {
    private struct State {
        var running = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Keys with work running: how many pieces, and who waits for the last to end.
        var keys: [String: (running: Int, waiters: [CheckedContinuation<Void, Never>])] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Runs `body` in a new task, counted until it returns. `keys` are registered before this returns, so a
    /// ``waitUntilFinished(key:)`` called any time after waits for it.
    package func start(keys: [String] = [], priority: TaskPriority? = nil, _ body: @escaping @Sendable () async -> Void) {
        enter(keys)
        Task(priority: priority) {
            await body()
            self.finish(keys)
        }
    }

    /// Runs `body` in the calling task, counted until it returns (so a concurrent ``waitUntilIdle()`` waits for it).
    package func run<T: Sendable>(keys: [String] = [], _ body: () async -> T) async -> T {
        enter(keys)
        defer { finish(keys) }
        return await body()
    }

    /// Returns once no counted work is running; work started while this waits is waited for too.
    package func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard state.running > 0 else { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Returns once no work registered under `key` is running (at once when there is none: one lock, one lookup).
    package func waitUntilFinished(key: String) async {
        guard state.withLock({ $0.keys[key] != nil }) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = state.withLock { state -> Bool in
                guard state.keys[key] != nil else { return true }
                state.keys[key]?.waiters.append(continuation)
                return false
            }
            if finished { continuation.resume() }
        }
    }

    /// How many counted pieces of work are running.
    package var count: Int { state.withLock { $0.running } }

    private func enter(_ keys: [String]) {
        state.withLock { state in
            state.running += 1
            for key in keys { state.keys[key, default: (0, [])].running += 1 }
        }
    }

    private func finish(_ keys: [String]) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            var released: [CheckedContinuation<Void, Never>] = []
            for key in keys {
                guard var entry = state.keys[key] else { continue }
                entry.running -= 1
                if entry.running == 0 {
                    released += entry.waiters
                    state.keys.removeValue(forKey: key)
                } else {
                    state.keys[key] = entry
                }
            }
            state.running -= 1
            if state.running == 0 {
                released += state.waiters
                state.waiters = []
            }
            return released
        }
        for waiter in waiters { waiter.resume() }
    }
}
