import Dispatch
import HeapModule
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Runs synchronous work — decoding, processing, blocking file and SQLite I/O — on Dispatch's
/// threads, at most ``width`` jobs at once, the highest priority first (Nuke's bounded queues).
///
/// Two reasons it exists: blocking work must not occupy Swift's cooperative pool (it has one thread
/// per core, and every async caller shares it), and 1,000 concurrent misses must not decode 1,000
/// images at once (each holds a full-size pixel buffer). A job waiting for its turn leaves the queue
/// at once when its task is cancelled; a running job sees the cancellation through the check it is given.
public final class BoundedExecutor: Sendable {
    /// Decoding and processing for every manager unless given another: one slot per core.
    public static let processing = BoundedExecutor(name: "magpie.processing", width: ProcessInfo.processInfo.activeProcessorCount)
    /// Blocking cache I/O (SQLite, payload files) and disk-hit decodes for every cache unless given another.
    public static let io = BoundedExecutor(name: "magpie.io", width: max(4, ProcessInfo.processInfo.activeProcessorCount))

    private typealias Ticket = QueueTicket<UInt8>

    /// A queued job: what runs it, and what answers its caller when it is cancelled before it starts. A thread
    /// job runs on a Dispatch thread and gives its slot back when it returns; a slot job (``withSlot(priority:_:)``)
    /// only resumes its caller, which gives the slot back when its async work ends.
    private struct Job {
        let run: @Sendable () -> Void
        let cancel: @Sendable () -> Void
        let onThread: Bool
    }

    private struct State {
        var running = 0
        var queue = Heap<Ticket>()
        var jobs: [UInt64: Job] = [:]
        var nextID: UInt64 = 0
        var peakRunning = 0
        var started = 0
    }

    /// The name, for logs and thread labels.
    public let name: String
    /// The most jobs that run at once.
    public let width: Int
    private let state = Mutex(State())

    /// An executor that runs at most `width` jobs at once.
    ///
    /// - Parameters:
    ///   - name: Names the executor in logs.
    ///   - width: The most jobs at once; at least 1.
    public init(name: String, width: Int) {
        self.name = name
        self.width = max(1, width)
    }

    /// Jobs running now.
    public var runningCount: Int { state.withLock { $0.running } }
    /// Jobs waiting for a slot now.
    public var queuedCount: Int { state.withLock { $0.jobs.count } }
    /// The most jobs that ran at once since the executor was made.
    public var peakRunningCount: Int { state.withLock { $0.peakRunning } }
    /// Jobs started since the executor was made (each a hand-over to a Dispatch thread, or a slot taken).
    public var startedCount: Int { state.withLock { $0.started } }

    /// Runs `body` on a Dispatch thread once a slot is free, and returns its result.
    ///
    /// - Parameters:
    ///   - priority: The job's place in the queue; nil (the default) for the calling task's priority.
    ///   - body: The work; its argument answers true once the calling task is cancelled (check it between
    ///     passes of long work and stop early).
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, or `CancellationError` when the task was cancelled before the job started.
    public func run<T: Sendable>(
        priority: TaskPriority? = nil, _ body: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws -> T
    ) async throws -> T {
        let priority = priority ?? Task.currentPriority
        let cancelled = CancellationFlag()
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job = Job(
                    run: { continuation.resume(with: Result { try body { cancelled.isSet } }) },
                    cancel: { continuation.resume(throwing: CancellationError()) }, onThread: true)
                enqueue(job, id: id, priority: priority)
            }
        } onCancel: {
            cancelled.set()
            // A queued job leaves the queue and is answered now; a running one sees the flag.
            state.withLock { $0.jobs.removeValue(forKey: id) }?.cancel()
        }
    }

    /// Holds one of the executor's slots while `body` runs in the calling task (async work that must not run more
    /// than ``width`` at once, such as the pipeline's misses, each holding downloaded bytes until processed).
    ///
    /// - Parameters:
    ///   - priority: The place in the queue; nil (the default) for the calling task's priority.
    ///   - body: The work, run once a slot is free.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, or `CancellationError` when the task was cancelled while waiting for a slot.
    public func withSlot<T: Sendable>(priority: TaskPriority? = nil, _ body: () async throws -> T) async throws -> T {
        let priority = priority ?? Task.currentPriority
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let job = Job(
                    run: { continuation.resume() }, cancel: { continuation.resume(throwing: CancellationError()) },
                    onThread: false)
                enqueue(job, id: id, priority: priority)
            }
        } onCancel: {
            state.withLock { $0.jobs.removeValue(forKey: id) }?.cancel()
        }
        defer { finished() }
        return try await body()
    }

    /// Starts `job` now when a slot is free, else queues it (or answers it cancelled when its task already is).
    private func enqueue(_ job: Job, id: UInt64, priority: TaskPriority) {
        let startNow = state.withLock { state -> Bool? in
            // Checked under the lock: a cancellation after this finds the job in the queue.
            if Task.isCancelled { return nil }
            if state.running < width {
                state.running += 1
                state.started += 1
                state.peakRunning = max(state.peakRunning, state.running)
                return true
            }
            state.jobs[id] = job
            state.queue.insert(Ticket(priority: priority.rawValue, id: id))
            return false
        }
        switch startNow {
        case nil: job.cancel()
        case true?: start(job, priority: priority)
        case false?: break
        }
    }

    private func start(_ job: Job, priority: TaskPriority) {
        guard job.onThread else { return job.run() }
        DispatchQueue.global(qos: priority >= .high ? .userInitiated : priority <= .low ? .utility : .default).async {
            job.run()
            self.finished()
        }
    }

    /// A job ended: its slot goes to the best queued job, if any.
    private func finished() {
        let next = state.withLock { state -> (Job, TaskPriority)? in
            while let ticket = state.queue.popMax() {
                if let job = state.jobs.removeValue(forKey: ticket.id) {
                    state.started += 1
                    return (job, TaskPriority(rawValue: ticket.priority))
                }
            }
            state.running -= 1
            return nil
        }
        if let (job, priority) = next { start(job, priority: priority) }
    }
}

/// Set once, read from any thread: tells a running job its caller was cancelled.
final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}
