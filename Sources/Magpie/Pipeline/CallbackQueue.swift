import MagpieCore
import Dispatch
// Full Foundation for `Thread.isMainThread` (FoundationEssentials has no threads).
import Foundation

/// Where a completion handler runs.
///
/// The default is ``untouch``: on a server there is no UI thread to return to, and hopping
/// to one only adds latency. Applications with a main run loop (a `dispatchMain()` CLI, an
/// async `main`) can ask for ``mainAsync``.
public enum CallbackQueue: Sendable {
    /// Asynchronously on the main queue; never runs unless the main queue is serviced.
    case mainAsync
    /// At once when already on the main thread, else asynchronously on the main queue.
    case mainCurrentOrAsync
    /// On whatever thread finished the work.
    case untouch
    /// Asynchronously on `queue`.
    case dispatch(DispatchQueue)

    /// Runs `block` where this says: synchronously for ``untouch`` (and ``mainCurrentOrAsync`` on the main thread),
    /// otherwise asynchronously.
    ///
    /// - Parameter block: The work to run.
    public func execute(_ block: @escaping @Sendable () -> Void) {
        switch self {
        case .mainAsync: DispatchQueue.main.async(execute: block)
        case .mainCurrentOrAsync:
            if Thread.isMainThread { block() } else { DispatchQueue.main.async(execute: block) }
        case .untouch: block()
        case .dispatch(let queue): queue.async(execute: block)
        }
    }
}
