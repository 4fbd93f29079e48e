#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Changes the image handed to the caller, after every cache: what it returns is never
/// stored, so a modifier can depend on the caller (its scale, say) without polluting the cache.
public protocol ImageModifier: Sendable {
    /// The image to return instead of `image`.
    func modify(_ image: Image) -> Image
}

/// A modifier from a closure.
public struct AnyImageModifier: ImageModifier {
    private let block: @Sendable (Image) -> Image

    /// A modifier that calls `modify`.
    public init(modify: @escaping @Sendable (Image) -> Image) {
        self.block = modify
    }

    /// `modify(image)`.
    public func modify(_ image: Image) -> Image { block(image) }
}
