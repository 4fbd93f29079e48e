/// Composites images onto a solid ``background`` (imgproxy's `background`, with `background_alpha` as the colour's
/// alpha): translucent pixels are mixed with the colour by their alpha ("source over"), so an opaque background makes
/// every pixel opaque and a translucent one leaves a translucent canvas. Opaque images are returned unchanged. Text
/// form: `flatten:RRGGBB`, or `flatten:RRGGBBAA` when the background is translucent.
public struct FlatteningImageProcessor: ImageProcessor {
    /// The colour under the image; with alpha below 255 the result keeps some transparency.
    public let background: RGBAColor

    /// A processor flattening onto `background`.
    public init(background: RGBAColor) {
        self.background = background
    }

    /// `flatten:RRGGBB`, or `flatten:RRGGBBAA` for a translucent background.
    public var identifier: String {
        background.alpha == 255 ? "flatten:\(background.hex.prefix(6))" : "flatten:\(background.hex)"
    }

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
            // Straight (not premultiplied) alpha on both sides: "source over" weighs the background's colour by
            // the part of its alpha that shows through, then divides the mix back out of the result's alpha.
            let under = background.w * (1 - pixel.w)
            let alpha = pixel.w + under
            guard alpha > 0 else { return .zero }
            var mixed = (pixel * pixel.w + background * under) / alpha
            mixed.w = alpha
            return mixed
        }
    }
}
