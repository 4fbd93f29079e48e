#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// One HTTP exchange shared by every caller that asked for the same request while it ran
/// (Kingfisher's fetch load). Each caller has its own continuation and progress handler.
/// A caller that cancels is answered at once; the exchange is cancelled only when no caller
/// is left. Every caller is answered exactly once: a subscriber is removed from the table
/// under the lock before its continuation is resumed.
final class DownloadLoad: Sendable {
    private struct Subscriber {
        let continuation: CheckedContinuation<ImageDataResult, any Error>
        let progress: DownloadProgressHandler?
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        /// Set once no caller is left or the result was delivered: the load takes no new callers.
        var closed = false
        var task: Task<Void, Never>?
        var lastProgressReport: ContinuousClock.Instant?
        var decodes: [String: Task<Image, any Error>] = [:]
    }

    /// The dedupe key (method, URL, headers, validators).
    let key: String
    let url: URL
    private let progressInterval: Duration
    private let state = Mutex(State())

    init(key: String, url: URL, progressInterval: Duration) {
        self.key = key
        self.url = url
        self.progressInterval = progressInterval
    }

    /// Adds a caller. False when the load is closed (the caller must start a new one).
    /// A caller whose task is already cancelled is answered with `cancelled` at once.
    func subscribe(id: UInt64, continuation: CheckedContinuation<ImageDataResult, any Error>, progress: DownloadProgressHandler?) -> Bool {
        let outcome = state.withLock { state -> Bool? in
            if state.closed { return false }
            // A caller already cancelled is answered here; one cancelled after this point leaves
            // through `LoadReference`, which hands onCancel the load or tells `set` to leave.
            if Task.isCancelled {
                // A new load whose only caller is already cancelled must not run.
                if state.subscribers.isEmpty { state.closed = true }
                return nil
            }
            state.subscribers[id] = Subscriber(continuation: continuation, progress: progress)
            return true
        }
        guard let added = outcome else {
            continuation.resume(throwing: MagpieError.requestFailed(reason: .cancelled(url)))
            return true
        }
        return added
    }

    /// Starts the exchange (once, by the caller that created the load).
    func start(_ operation: @escaping @Sendable () async -> Void) {
        let task = Task { await operation() }
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.closed
        }
        if cancelNow { task.cancel() }
    }

    /// Removes a caller and answers it with `cancelled`. Returns true when it was the last one:
    /// the exchange is then cancelled and the load closed.
    @discardableResult
    func unsubscribe(id: UInt64) -> Bool {
        let (subscriber, task, wasLast) = state.withLock { state -> (Subscriber?, Task<Void, Never>?, Bool) in
            guard let subscriber = state.subscribers.removeValue(forKey: id) else { return (nil, nil, false) }
            guard state.subscribers.isEmpty, !state.closed else { return (subscriber, nil, false) }
            state.closed = true
            return (subscriber, state.task, true)
        }
        subscriber?.continuation.resume(throwing: MagpieError.requestFailed(reason: .cancelled(url)))
        task?.cancel()
        return wasLast
    }

    /// Number of callers waiting.
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Reports progress to every caller, at most every `progressInterval` unless `force`.
    func reportProgress(_ progress: DownloadProgress, force: Bool = false) {
        let handlers = state.withLock { state -> [DownloadProgressHandler] in
            let now = ContinuousClock.now
            if !force, let last = state.lastProgressReport, now - last < progressInterval { return [] }
            state.lastProgressReport = now
            return state.subscribers.values.compactMap(\.progress)
        }
        for handler in handlers { handler(progress) }
    }

    /// Answers every remaining caller with `result` and closes the load.
    func finish(_ result: Result<ImageDataResult, MagpieError>) {
        let subscribers = state.withLock { state -> [Subscriber] in
            state.closed = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.resume(with: result.mapError { $0 as any Error }) }
    }

    /// Decodes the body once per decoding variant, however many callers ask: the first starts
    /// the decode, the others await it.
    func image(variant: String, decode: @escaping @Sendable () throws -> Image) async throws -> Image {
        let task = state.withLock { state -> Task<Image, any Error> in
            if let existing = state.decodes[variant] { return existing }
            let task = Task { try decode() }
            state.decodes[variant] = task
            return task
        }
        return try await task.value
    }
}
