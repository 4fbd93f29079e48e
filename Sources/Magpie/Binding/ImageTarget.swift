/// Anything that shows one image: a terminal view, a UI view, or a ``HeadlessImageTarget``.
/// `target.mg.setImage(with:)` loads into it.
///
/// Magpie never calls `display` while it holds a lock: what to display is decided under the binding's
/// lock (a stale result is dropped there) and the calls run right after, one at a time and in the
/// order they were decided, so displays of one target never overlap and a stale result can never land
/// after a newer placeholder or image. `display` may call back into the binding (`mg.setImage`, …).
public protocol ImageTarget: MagpieCompatible {
    /// Magpie's per-target state. Conformers declare `public let imageBinding = ImageBinding()`.
    var imageBinding: ImageBinding { get }
    /// Shows `image`; nil clears the target. Called outside any Magpie lock, one call at a time per target.
    ///
    /// - Parameter image: The placeholder, the loaded image, the failure image, or nil.
    func display(_ image: Image?)
    /// The image the target shows now, nil when it is clear (used by
    /// ``MagpieOption/keepCurrentImageWhileLoading``).
    var displayedImage: Image? { get }
}
