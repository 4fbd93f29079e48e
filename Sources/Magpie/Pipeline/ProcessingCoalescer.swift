#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Runs the miss path (original cache or download, then decode, process, store) once per
/// wanted variant, however many callers want it at the same time (Nuke's task coalescing).
///
/// Every caller has its own continuation and progress handler. A caller that cancels is
/// answered at once; the shared work is cancelled only when no caller is left, and a caller
/// arriving after that starts fresh work. Each caller is removed from the table under the
/// lock before it is resumed, so nobody is answered twice.
final class ProcessingCoalescer: Sendable {
    typealias Work = @Sendable (_ progress: @escaping DownloadProgressHandler) async throws -> RetrieveImageResult

    private struct Waiter {
        let continuation: CheckedContinuation<RetrieveImageResult, any Error>
        let progress: DownloadProgressHandler?
    }

    private struct Entry {
        let generation: UInt64
        var waiters: [UInt64: Waiter] = [:]
        var task: Task<Void, Never>?
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Callers that joined work another caller had started.
    let joined = Atomic<Int>(0)

    /// `work`'s result for `key`, shared with every concurrent caller of the same key.
    /// `cancelled` is the error a cancelled caller gets.
    func run(key: String, cancelled: MagpieError, progress: DownloadProgressHandler?, work: @escaping Work) async throws -> RetrieveImageResult {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let waiter = Waiter(continuation: continuation, progress: progress)
                let start = state.withLock { state -> UInt64? in
                    // Checked under the lock: a cancellation that lands after this point finds the waiter.
                    if Task.isCancelled { return nil }
                    if state.entries[key] != nil {
                        state.entries[key]!.waiters[id] = waiter
                        joined.add(1, ordering: .relaxed)
                        return 0
                    }
                    let entry = Entry(generation: id, waiters: [id: waiter])
                    state.entries[key] = entry
                    return id
                }
                switch start {
                case nil: continuation.resume(throwing: cancelled)
                case 0?: break
                case let generation?: launch(key: key, generation: generation, work: work)
                }
            }
        } onCancel: {
            leave(key: key, id: id, cancelled: cancelled)
        }
    }

    private func launch(key: String, generation: UInt64, work: @escaping Work) {
        let task = Task {
            let result: Result<RetrieveImageResult, any Error>
            do {
                result = .success(try await work { progress in self.report(progress, key: key, generation: generation) })
            } catch {
                result = .failure(error)
            }
            self.finish(key: key, generation: generation, result: result)
        }
        let orphaned = state.withLock { state -> Bool in
            guard state.entries[key]?.generation == generation else { return true }
            state.entries[key]!.task = task
            return false
        }
        // Every caller left before the task was recorded.
        if orphaned { task.cancel() }
    }

    private func report(_ progress: DownloadProgress, key: String, generation: UInt64) {
        let handlers = state.withLock { state -> [DownloadProgressHandler] in
            guard let entry = state.entries[key], entry.generation == generation else { return [] }
            return entry.waiters.values.compactMap(\.progress)
        }
        for handler in handlers { handler(progress) }
    }

    private func finish(key: String, generation: UInt64, result: Result<RetrieveImageResult, any Error>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard let entry = state.entries[key], entry.generation == generation else { return [] }
            state.entries[key] = nil
            return Array(entry.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(with: result) }
    }

    private func leave(key: String, id: UInt64, cancelled: MagpieError) {
        let (waiter, task) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
            guard var entry = state.entries[key], let waiter = entry.waiters.removeValue(forKey: id) else { return (nil, nil) }
            if entry.waiters.isEmpty {
                state.entries[key] = nil
                return (waiter, entry.task)
            }
            state.entries[key] = entry
            return (waiter, nil)
        }
        waiter?.continuation.resume(throwing: cancelled)
        task?.cancel()
    }
}
