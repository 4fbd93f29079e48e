import Synchronization

/// Work started in the background and not yet finished, with a way to wait for all of it: the
/// caches' fire-and-forget disk writes, which a process about to exit must not lose.
package final class PendingWork: Sendable {
    private struct State {
        var running = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Runs `body` in a new task, counted until it returns.
    package func start(priority: TaskPriority? = nil, _ body: @escaping @Sendable () async -> Void) {
        state.withLock { $0.running += 1 }
        Task(priority: priority) {
            await body()
            self.finish()
        }
    }

    /// Runs `body` in the calling task, counted until it returns (so a concurrent ``waitUntilIdle()`` waits for it).
    package func run<T: Sendable>(_ body: () async -> T) async -> T {
        state.withLock { $0.running += 1 }
        defer { finish() }
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

    /// How many counted pieces of work are running.
    package var count: Int { state.withLock { $0.running } }

    private func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
