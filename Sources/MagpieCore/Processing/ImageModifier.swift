/// Changes the image handed to the caller, after every cache: what it returns is never
/// stored, so a modifier can depend on the caller (its scale, say) without polluting the cache.
public protocol ImageModifier: Sendable {
    /// The image to return instead of `image`. Runs on every retrieval, cache hits included: keep it cheap.
    ///
    /// - Parameter image: The image as cached (processed, never modified before).
    /// - Returns: The image handed to the caller.
    func modify(_ image: Image) -> Image
}

/// A modifier from a closure.
public struct AnyImageModifier: ImageModifier {
    private let block: @Sendable (Image) -> Image

    /// A modifier that calls `modify`.
    ///
    /// - Parameter modify: Returns the image to hand to the caller.
    public init(modify: @escaping @Sendable (Image) -> Image) {
        self.block = modify
    }

    /// Calls the wrapped closure with `image` and returns its result.
    public func modify(_ image: Image) -> Image { block(image) }
}
