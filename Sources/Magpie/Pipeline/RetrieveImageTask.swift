import MagpieCore

/// A retrieval started with a completion handler. ``cancel()`` stops it at whatever stage it is
/// and answers the handler (once) with ``MagpieError/RequestFailureReason/cancelled(_:)``.
public final class RetrieveImageTask: Sendable {
    /// The source being retrieved.
    public let source: Source
    private let task: Task<Void, Never>

    init(source: Source, operation: @escaping @Sendable () async -> Void) {
        self.source = source
        self.task = Task { await operation() }
    }

    /// Cancels the retrieval; does nothing once the handler was called. A download shared with other
    /// callers keeps running for them.
    public func cancel() { task.cancel() }

    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { task.isCancelled }

    /// Waits until the completion handler has been called (or, with a dispatching callback queue, scheduled).
    public func wait() async { await task.value }
}
