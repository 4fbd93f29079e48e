import MagpieCore
import Synchronization

/// Magpie's state for one image target: its current request, placeholder, indicator and manager.
/// A target creates one (`public let imageBinding = ImageBinding()`) and leaves it to `target.mg`.
///
/// Every request gets a new identifier; a result is displayed only while its request is still the
/// target's current one. What the target, placeholder and indicator are told (display, add, start,
/// progress) is decided under the binding's lock, in the order the requests change, but never called
/// there: the calls queue up and run in that order right after, outside the lock (``ImageTarget/display(_:)``
/// may call back into the binding, or take locks of its own, without deadlocking).
public final class ImageBinding: Sendable {
    struct Request {
        let id: UInt64
        let source: Source?
        var task: RetrieveImageTask?
        /// Until its result arrived (never for a nil source).
        var inFlight: Bool
        /// `cancelDownloadTask()` was called: its result is not displayed and reports cancellation.
        var cancelled = false
    }

    struct State {
        var lastIdentifier: UInt64 = 0
        var current: Request?
        var manager: ImageManager = .shared
        var indicator: (any Indicator)?
        var indicatorAnimating = false
        /// The placeholder added to the target and not yet removed.
        var placeholder: (any Placeholder)?
        /// Calls to user code decided under the lock, to run after it, in order.
        var effects: [@Sendable () -> Void] = []
        /// A thread is running `effects` now; others leave theirs to it, which keeps them in order.
        var runningEffects = false
    }

    let state = Mutex(State())

    /// A binding with no request, no indicator and the shared manager (``ImageManager/shared``).
    public init() {}

    /// The manager requests use; default ``ImageManager/shared``. Requests already running keep theirs.
    public var manager: ImageManager {
        get { state.withLock { $0.manager } }
        set { state.withLock { $0.manager = newValue } }
    }

    /// Shown while a request loads. Replacing it while loading stops the old one and starts the new one.
    public var indicator: (any Indicator)? {
        get { state.withLock { $0.indicator } }
        set {
            withEffects { state in
                state.stopIndicator()
                state.indicator = newValue
                if state.isLoading { state.startIndicator() }
            }
        }
    }

    /// Changes the state under the lock, then runs the user calls the change queued, outside the lock and
    /// in the order they were decided (one thread runs them at a time; a thread that finds another one
    /// running leaves its calls to it).
    @discardableResult
    func withEffects<T>(_ change: (inout State) -> T) -> T {
        let value = state.withLock { change(&$0) }
        while let batch = state.withLock({ state -> [@Sendable () -> Void]? in
            guard !state.runningEffects, !state.effects.isEmpty else { return nil }
            state.runningEffects = true
            defer { state.effects = [] }
            return state.effects
        }) {
            for effect in batch { effect() }
            state.withLock { $0.runningEffects = false }
        }
        return value
    }

    /// The current request's identifier; nil before the first request and after `setImage(with: nil)`.
    public var taskIdentifier: UInt64? {
        state.withLock { state in state.current.flatMap { $0.source == nil ? nil : $0.id } }
    }

    /// The current request's source; nil before the first request and after `setImage(with: nil)`.
    public var source: Source? { state.withLock { $0.current?.source } }

    /// True while the current request runs (not after it finished or was cancelled).
    public var isLoading: Bool { state.withLock { $0.isLoading } }
}

extension ImageBinding.State {
    var isLoading: Bool { current.map { $0.inFlight && !$0.cancelled } ?? false }

    /// Makes a new current request; returns the previous one's task when it still runs.
    mutating func begin(_ source: Source?) -> RetrieveImageTask? {
        let previous = current?.inFlight == true ? current?.task : nil
        lastIdentifier &+= 1
        current = ImageBinding.Request(id: lastIdentifier, source: source, inFlight: source != nil)
        return previous
    }

    /// Replaces the shown placeholder with `placeholder`; no placeholder clears the target, so the
    /// previous request's image never sits next to a new request.
    mutating func show(_ placeholder: (any Placeholder)?, on target: any ImageTarget) {
        let previous = self.placeholder
        self.placeholder = placeholder
        effects.append {
            previous?.remove(from: target)
            if let placeholder { placeholder.add(to: target) } else { target.display(nil) }
        }
    }

    /// Takes the placeholder off and displays `image`.
    mutating func display(_ image: Image?, on target: any ImageTarget) {
        let previous = placeholder
        placeholder = nil
        effects.append {
            previous?.remove(from: target)
            target.display(image)
        }
    }

    mutating func startIndicator() {
        guard !indicatorAnimating, let indicator else { return }
        indicatorAnimating = true
        effects.append { indicator.startAnimating() }
    }

    mutating func stopIndicator() {
        guard indicatorAnimating else { return }
        indicatorAnimating = false
        if let indicator { effects.append { indicator.stopAnimating() } }
    }
}
