/// What a target shows while its image loads (and keeps when loading fails without
/// ``MagpieOption/onFailureImage(_:)``).
///
/// ``add(to:)`` and ``remove(from:)`` run outside any Magpie lock, one at a time per target and in order
/// (see ``ImageTarget``).
public protocol Placeholder: Sendable {
    /// Shows the placeholder on `target`.
    ///
    /// - Parameter target: The target a request starts on.
    func add(to target: any ImageTarget)
    /// Takes the placeholder off `target`, just before the loaded image (or the failure image) is displayed.
    ///
    /// - Parameter target: The target the placeholder was added to.
    func remove(from target: any ImageTarget)
}

/// An image is its own placeholder: it is displayed, and the loaded image simply replaces it.
extension Image: Placeholder {
    /// Displays this image on `target`.
    public func add(to target: any ImageTarget) { target.display(self) }
    /// Nothing: the next display replaces this image.
    public func remove(from target: any ImageTarget) {}
}
