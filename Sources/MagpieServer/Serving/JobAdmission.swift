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
    /// Gives up jobs still waiting at their timeout (the server's one timer for its deadlines).
    private let deadlines: DeadlineWatch
    /// Jobs admitted and not finished: running plus waiting.
    private let admitted = Mutex(0)

    init(workers: Int, queueLength: Int, deadlines: DeadlineWatch) {
        self.workers = max(1, workers)
        self.queueLength = max(0, queueLength)
        self.deadlines = deadlines
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
        let gate = StartGate()
        let job = Task {
            try await self.slots.withSlot(priority: nil) {
                // A job that got its worker after its timeout went off has been answered already.
                guard gate.start() else { throw Refusal.waitedTooLong }
                queued(ContinuousClock.now - arrival)
                return try await body()
            }
        }
        // Gives up a job still waiting; a job that has started is never cut here.
        let alarm = DeadlineWatch.deadline(after: timeout).map { deadline in
            deadlines.arm(until: deadline) { if gate.expire() { job.cancel() } }
        }
        let result = await withTaskCancellationHandler {
            await job.result
        } onCancel: {
            job.cancel()
        }
        if let alarm { deadlines.disarm(alarm) }
        if gate.expired { throw Refusal.waitedTooLong }
        return try result.get()
    }
}

/// Whether a job got its worker before its timeout went off: whichever comes first wins, once.
private final class StartGate: Sendable {
    private enum State { case waiting, started, expired }
    private let state = Mutex(State.waiting)

    var expired: Bool { state.withLock { $0 == .expired } }

    /// True when the job may start (its timeout has not gone off).
    func start() -> Bool { settle(.started) }

    /// True when the job was still waiting (it is given up now).
    func expire() -> Bool { settle(.expired) }

    private func settle(_ outcome: State) -> Bool {
        state.withLock { state in
            guard state == .waiting else { return false }
            state = outcome
            return true
        }
    }
}
