#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Composites images onto a solid ``background`` (imgproxy's `background`): every pixel becomes opaque, translucent
/// ones mixed with the colour by their alpha. Opaque images are returned unchanged. Text form: `flatten:RRGGBB`.
public struct FlatteningImageProcessor: ImageProcessor {
    /// The colour under the image; its alpha is ignored (the result is opaque).
    public let background: RGBAColor

    /// A processor flattening onto `background`.
    public init(background: RGBAColor) {
        self.background = background
    }

    /// `flatten:RRGGBB`.
    public var identifier: String { "flatten:\(background.hex.prefix(6))" }

    /// The flattened image, every frame alike.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        try processImage(item, context: context) { image in
            if image.frames.allSatisfy({ $0.pixels.isOpaque }) { return image }
            return try image.mapFrames { try PixelMath.map($0, Flatten(background: PixelMath.unit(background))) }
        }
    }

    private struct Flatten: PixelTransform {
        let background: SIMD4<Float>

        @inline(__always)
        func callAsFunction(_ pixel: SIMD4<Float>) -> SIMD4<Float> {
            var mixed = pixel * pixel.w + background * (1 - pixel.w)
            mixed.w = 1
            return mixed
        }
    }
}
