import MagpieCore
import Synchronization

/// A ready ``ImageTarget`` to subclass: it owns the binding and remembers the displayed image under a lock, so a
/// subclass only draws. `ImageTarget` must be `Sendable`, which a plain class with a mutable property is not; this
/// base is `@unchecked Sendable` and a subclass may keep state of its own, on the condition that it protects that
/// state itself or only touches it in ``render(_:)`` (Magpie calls it one call at a time per target, never under a
/// Magpie lock).
///
/// Swift asks every subclass of an unchecked-`Sendable` class to say so again:
///
/// ```swift
/// final class AvatarView: ImageTargetBase, @unchecked Sendable {
///     override func render(_ image: Image?) { /* draw `image`, or clear when nil */ }
/// }
/// let view = AvatarView()
/// view.mg.setImage(with: url) { result in print(result) }
/// ```
open class ImageTargetBase: ImageTarget, @unchecked Sendable {
    /// Magpie's per-target state, used through `mg`.
    public let imageBinding = ImageBinding()
    private let shown: Mutex<Image?>

    /// A target showing `image` (nil: clear).
    ///
    /// - Parameter image: What the target shows before anything is loaded (default nil).
    public init(image: Image? = nil) {
        shown = Mutex(image)
    }

    /// Records `image` as the displayed one, then calls ``render(_:)``. Magpie calls this; subclasses override
    /// ``render(_:)`` instead.
    ///
    /// - Parameter image: The placeholder, the loaded image, the failure image, or nil to clear.
    public final func display(_ image: Image?) {
        shown.withLock { $0 = image }
        render(image)
    }

    /// The image shown now (what the last ``display(_:)`` passed).
    public final var displayedImage: Image? { shown.withLock { $0 } }

    /// Draws `image` (nil: clear). Does nothing by default. Called one at a time per target, outside Magpie's
    /// locks; it may call back into `mg` (for example to load another source).
    ///
    /// - Parameter image: The image to draw, or nil.
    open func render(_ image: Image?) {}
}
