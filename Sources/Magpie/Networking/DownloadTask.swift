import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A running download started with a completion handler. ``cancel()`` answers the handler with
/// ``MagpieError/RequestFailureReason/cancelled(_:)`` (once) and stops the HTTP exchange if no other caller shares it.
public final class DownloadTask: Sendable {
    /// The URL being downloaded.
    public let url: URL
    private let task: Task<Void, Never>

    init(url: URL, operation: @escaping @Sendable () async -> Void) {
        self.url = url
        self.task = Task { await operation() }
    }

    /// Cancels this caller's download; does nothing once the handler was called.
    public func cancel() { task.cancel() }

    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { task.isCancelled }

    /// Waits until the completion handler has returned.
    public func wait() async { await task.value }
}
