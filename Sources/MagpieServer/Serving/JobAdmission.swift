import Magpie
import Synchronization

/// Load shedding: at most `workers` jobs run and `queueLength` wait; a job arriving past that is refused at once
/// (429), and one that waits longer than its timeout gives up (503). Cached results never come here.
final class JobAdmission: Sendable {
    /// Why a job was not run.
    enum Refusal: Error, Equatable {
        /// Workers and queue were full when it arrived.
        case overloaded
        /// It waited for a worker longer than allowed.
        case waitedTooLong
    }

    let workers: Int
    let queueLength: Int
    private let slots: BoundedExecutor
    /// Jobs admitted and not finished: running plus waiting.
    private let admitted = Mutex(0)

    init(workers: Int, queueLength: Int) {
        self.workers = max(1, workers)
        self.queueLength = max(0, queueLength)
        slots = BoundedExecutor(name: "magpie.server.workers", width: self.workers)
    }

    /// Jobs running now.
    var running: Int { slots.runningCount }
    /// Jobs waiting for a worker now.
    var waiting: Int { slots.queuedCount }

    /// Runs `body` once a worker is free; `queued` is called with the time spent waiting.
    ///
    /// - Throws: ``Refusal/overloaded`` when workers and queue are full, ``Refusal/waitedTooLong`` when no worker
    ///   came within `timeout`, or what `body` threw.
    func run<T: Sendable>(
        timeout: Duration, queued: @escaping @Sendable (Duration) -> Void = { _ in },
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let capacity = workers + queueLength
        let entered = admitted.withLock { count -> Bool in
            guard count < capacity else { return false }
            count += 1
            return true
        }
        guard entered else { throw Refusal.overloaded }
        defer { admitted.withLock { $0 -= 1 } }
        let arrival = ContinuousClock.now
        let started = StartedFlag()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await self.slots.withSlot(priority: nil) {
                    started.set()
                    queued(ContinuousClock.now - arrival)
                    return try await body()
                }
            }
            group.addTask {
                // Wakes once to give up a job still waiting; a job that has started is never cut here.
                try? await Task.sleep(for: timeout)
                return nil
            }
            while let next = try await group.next() {
                if let value = next {
                    group.cancelAll()
                    return value
                }
                if !started.isSet {
                    group.cancelAll()
                    throw Refusal.waitedTooLong
                }
            }
            throw Refusal.waitedTooLong
        }
    }
}

/// Set once a job got its worker: after that, the wait timeout no longer applies to it.
private final class StartedFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
