import Synchronization

/// Keyed work that every caller asking for the same key while it runs shares (Nuke's task
/// coalescing, Kingfisher's shared download): the first caller starts it, later callers join.
///
/// - Each caller has its own result delivery and progress handler, and can leave alone: a caller
///   whose task is cancelled is answered with the cancellation error at once, the others wait on.
/// - The work is cancelled when its last caller leaves; a caller arriving after that starts fresh work.
/// - The work runs at the highest priority among its callers: a caller with a higher priority than the
///   work's, or a caller escalated while it waits, escalates it (`Task.escalatePriority`; raised, never
///   lowered), and code inside the work sees that through `withTaskPriorityEscalationHandler` (the download
///   scheduler moves a queued download up).
/// - Progress the work reports goes to every current caller.
///
/// Every caller is answered exactly once: it is removed from the table under the lock before it is resumed.
public final class SharedWork<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The work for one key; `progress` fans its reports out to the current callers.
    public typealias Work = @Sendable (_ progress: ProgressReporter) async throws -> Value

    /// Hands the work's progress to every caller that is waiting at the time of the report.
    public struct ProgressReporter: Sendable {
        fileprivate let deliver: @Sendable (DownloadProgress, Bool) -> Void

        /// Reports `progress` to every current caller; at most once per the pool's `progressInterval`
        /// unless `final` (the last report of a transfer always goes out).
        public func report(_ progress: DownloadProgress, final: Bool = false) { deliver(progress, final) }
    }

    private struct Caller {
        let continuation: CheckedContinuation<Value, any Error>
        let progress: (@Sendable (DownloadProgress) -> Void)?
        let cancellationError: any Error & Sendable
    }

    private struct Entry {
        let generation: UInt64
        var callers: [UInt64: Caller] = [:]
        var task: Task<Void, Never>?
        var priority: TaskPriority
        var lastProgress: ContinuousClock.Instant?
    }

    /// How a caller's arrival went: answered at once (already cancelled), joined running work, or started it.
    private enum Start {
        case cancelled
        case joined(Task<Void, Never>?, escalate: Bool)
        case new
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var nextID: UInt64 = 0
        var joined = 0
        var started = 0
    }

    private let state = Mutex(State())
    private let progressInterval: Duration

    /// A pool with no work running.
    ///
    /// - Parameter progressInterval: The least time between two progress reports to the callers (the work's
    ///   final report always goes out); zero (the default) passes every report on.
    public init(progressInterval: Duration = .zero) {
        self.progressInterval = progressInterval
    }

    /// Callers that joined work another caller had started, since the pool was made.
    public var joinedCount: Int { state.withLock { $0.joined } }

    /// Works started since the pool was made.
    public var startedCount: Int { state.withLock { $0.started } }

    /// Keys with work running now.
    public var runningCount: Int { state.withLock { $0.entries.count } }

    /// Callers waiting for `key` now.
    ///
    /// - Parameter key: The work's key.
    public func callerCount(for key: Key) -> Int { state.withLock { $0.entries[key]?.callers.count ?? 0 } }

    /// The priority the work for `key` runs at now (the highest among its callers); nil when none runs.
    ///
    /// - Parameter key: The work's key.
    public func priority(for key: Key) -> TaskPriority? { state.withLock { $0.entries[key]?.priority } }

    /// The result of the work for `key`: joins the work running for it, or starts `work`.
    ///
    /// - Parameters:
    ///   - key: Callers with equal keys share one run of the work.
    ///   - priority: This caller's priority; nil (the default) for the calling task's. A caller above the
    ///     running work's priority raises it.
    ///   - cancellationError: What this caller gets when its task is cancelled while it waits.
    ///   - progress: Called with the work's progress reports while this caller waits.
    ///   - onJoin: Called (before this suspends) when this caller joins work another caller started.
    ///   - work: What to run when no work for `key` is running; runs in a task of its own, which is
    ///     cancelled when no caller is left.
    /// - Returns: The work's value, the same for every caller of one run.
    /// - Throws: The work's error, or `cancellationError` when this caller is cancelled.
    public func value(
        for key: Key, priority: TaskPriority? = nil, cancellationError: any Error & Sendable = CancellationError(),
        progress: (@Sendable (DownloadProgress) -> Void)? = nil, onJoin: (@Sendable () -> Void)? = nil, work: @escaping Work
    ) async throws -> Value {
        let priority = priority ?? Task.currentPriority
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        // A caller escalated while it waits (a higher caller joined the stage it runs in) raises the work it waits
        // for: escalation travels down the stages (variant → decode → download) as it does through `Task.value`.
        return try await withTaskPriorityEscalationHandler {
            try await wait(
                for: key, id: id, priority: priority, cancellationError: cancellationError, progress: progress, onJoin: onJoin,
                work: work)
        } onPriorityEscalated: { _, raised in
            self.raise(key: key, id: id, to: raised)
        }
    }

    private func wait(
        for key: Key, id: UInt64, priority: TaskPriority, cancellationError: any Error & Sendable,
        progress: (@Sendable (DownloadProgress) -> Void)?, onJoin: (@Sendable () -> Void)?, work: @escaping Work
    ) async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let caller = Caller(continuation: continuation, progress: progress, cancellationError: cancellationError)
                let start = state.withLock { state -> Start in
                    // Checked under the lock: a cancellation that lands after this finds the caller in the table.
                    if Task.isCancelled { return .cancelled }
                    // The entry is changed in place (`entries[key]!`): a local copy would share the callers' storage
                    // and make every join copy it, quadratic in the callers (1,000 joins took 2.7× as long).
                    if state.entries[key] != nil {
                        state.entries[key]!.callers[id] = caller
                        let escalate = priority > state.entries[key]!.priority
                        if escalate { state.entries[key]!.priority = priority }
                        state.joined += 1
                        return .joined(state.entries[key]!.task, escalate: escalate)
                    }
                    state.entries[key] = Entry(generation: id, callers: [id: caller], priority: priority)
                    state.started += 1
                    return .new
                }
                switch start {
                case .cancelled: continuation.resume(throwing: cancellationError)
                case .joined(let task, let escalate):
                    onJoin?()
                    if escalate, let task { task.escalatePriority(to: priority) }
                case .new: launch(key: key, generation: id, priority: priority, work: work)
                }
            }
        } onCancel: {
            leave(key: key, id: id)
        }
    }

    /// Raises the work `id` waits for to `priority` when that is higher than the work's.
    private func raise(key: Key, id: UInt64, to priority: TaskPriority) {
        let task = state.withLock { state -> Task<Void, Never>? in
            guard let entry = state.entries[key], entry.callers[id] != nil, priority > entry.priority else { return nil }
            state.entries[key]!.priority = priority
            return entry.task
        }
        task?.escalatePriority(to: priority)
    }

    private func launch(key: Key, generation: UInt64, priority: TaskPriority, work: @escaping Work) {
        let reporter = ProgressReporter { [weak self] progress, final in
            self?.report(progress, final: final, key: key, generation: generation)
        }
        let task = Task(priority: priority) {
            let result: Result<Value, any Error>
            do {
                result = .success(try await work(reporter))
            } catch {
                result = .failure(error)
            }
            self.finish(key: key, generation: generation, result: result)
        }
        let (orphaned, raisedTo) = state.withLock { state -> (Bool, TaskPriority?) in
            guard let entry = state.entries[key], entry.generation == generation else { return (true, nil) }
            state.entries[key]!.task = task
            // A caller may have joined higher before the task was recorded.
            return (false, entry.priority > priority ? entry.priority : nil)
        }
        // Every caller left before the task was recorded.
        if orphaned { task.cancel() }
        if let raisedTo { task.escalatePriority(to: raisedTo) }
    }

    private func report(_ progress: DownloadProgress, final: Bool, key: Key, generation: UInt64) {
        let handlers = state.withLock { state -> [@Sendable (DownloadProgress) -> Void] in
            guard let entry = state.entries[key], entry.generation == generation else { return [] }
            // A closure, not `\.progress`: in a generic type the key path is built at run time on every call, which
            // was 4.8 % of the samples of 1,000 downloads (nearly all of them with no progress handler at all).
            let handlers = entry.callers.values.compactMap { $0.progress }
            guard !handlers.isEmpty else { return [] }
            let now = ContinuousClock.now
            if !final, progressInterval > .zero, let last = entry.lastProgress, now - last < progressInterval { return [] }
            state.entries[key]!.lastProgress = now
            return handlers
        }
        for handler in handlers { handler(progress) }
    }

    private func finish(key: Key, generation: UInt64, result: Result<Value, any Error>) {
        let callers = state.withLock { state -> [Caller] in
            guard let entry = state.entries[key], entry.generation == generation else { return [] }
            state.entries[key] = nil
            return Array(entry.callers.values)
        }
        for caller in callers { caller.continuation.resume(with: result) }
    }

    private func leave(key: Key, id: UInt64) {
        let (caller, task) = state.withLock { state -> (Caller?, Task<Void, Never>?) in
            guard let caller = state.entries[key]?.callers.removeValue(forKey: id) ?? nil else { return (nil, nil) }
            guard state.entries[key]!.callers.isEmpty else { return (caller, nil) }
            let task = state.entries[key]!.task
            state.entries[key] = nil
            return (caller, task)
        }
        caller?.continuation.resume(throwing: caller!.cancellationError)
        task?.cancel()
    }
}
