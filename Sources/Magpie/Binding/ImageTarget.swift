/// Anything that shows one image: a terminal view, a UI view, or a ``HeadlessImageTarget``.
/// `target.mg.setImage(with:)` loads into it.
///
/// Magpie calls `display` while it holds the target's binding lock, so displays of one target
/// never overlap and a stale result can never land after a newer placeholder or image.
/// `display` must therefore not call back into the binding of the same target (`mg.setImage`,
/// `mg.indicator`, …); a target that draws on another thread hands the image over and returns.
public protocol ImageTarget: MagpieCompatible {
    /// Magpie's per-target state. Conformers declare `public let imageBinding = ImageBinding()`.
    var imageBinding: ImageBinding { get }
    /// Shows `image`; nil clears the target. Called with the binding lock held: return quickly.
    ///
    /// - Parameter image: The placeholder, the loaded image, the failure image, or nil.
    func display(_ image: Image?)
    /// The image the target shows now, nil when it is clear (used by
    /// ``MagpieOption/keepCurrentImageWhileLoading``).
    var displayedImage: Image? { get }
}
