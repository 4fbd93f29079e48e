import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Magpie's state for one image target: its current request, placeholder, indicator and manager.
/// A target creates one (`public let imageBinding = ImageBinding()`) and leaves it to `target.mg`.
///
/// Every request gets a new identifier; a result is displayed only while its request is still the
/// target's current one, checked under the same lock as the display itself.
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
            state.withLock { state in
                state.stopIndicator()
                state.indicator = newValue
                if state.isLoading { state.startIndicator() }
            }
        }
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
        self.placeholder?.remove(from: target)
        self.placeholder = placeholder
        if let placeholder { placeholder.add(to: target) } else { target.display(nil) }
    }

    /// Takes the placeholder off and displays `image`.
    mutating func display(_ image: Image?, on target: any ImageTarget) {
        placeholder?.remove(from: target)
        placeholder = nil
        target.display(image)
    }

    mutating func startIndicator() {
        guard !indicatorAnimating, let indicator else { return }
        indicator.startAnimating()
        indicatorAnimating = true
    }

    mutating func stopIndicator() {
        guard indicatorAnimating else { return }
        indicator?.stopAnimating()
        indicatorAnimating = false
    }
}
