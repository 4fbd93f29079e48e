import MagpieCore
import Synchronization

/// An image target with no screen, for servers and tests: it keeps the displayed image and a
/// history of every display call.
public final class HeadlessImageTarget: ImageTarget {
    /// How many display calls ``displayHistory`` keeps (100); older ones are dropped.
    public static let historyLimit = 100

    /// Magpie's per-target state, used through `mg`.
    public let imageBinding = ImageBinding()

    private struct Slot {
        var image: Image?
        var history: [Image?] = []
    }

    private let slot: Mutex<Slot>

    /// A target showing `image` (nil: clear). The initial image is not part of the history.
    ///
    /// - Parameter image: What the target shows before anything is loaded (default nil).
    public init(image: Image? = nil) {
        slot = Mutex(Slot(image: image))
    }

    /// Shows `image` and records the call in ``displayHistory``.
    ///
    /// - Parameter image: The image to show; nil clears the target.
    public func display(_ image: Image?) {
        slot.withLock { slot in
            slot.image = image
            slot.history.append(image)
            if slot.history.count > Self.historyLimit { slot.history.removeFirst(slot.history.count - Self.historyLimit) }
        }
    }

    /// The image shown now.
    public var displayedImage: Image? { slot.withLock { $0.image } }

    /// The images passed to ``display(_:)``, oldest first (nil for clears); the last ``historyLimit`` calls.
    public var displayHistory: [Image?] { slot.withLock { $0.history } }
}
