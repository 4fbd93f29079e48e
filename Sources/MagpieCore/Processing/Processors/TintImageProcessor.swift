/// Paints `tint` over the image at the tint's alpha, only where the image is (source-atop):
/// colour becomes `tint × a + colour × (1 − a)` with `a` the tint's alpha, and the image's
/// alpha is kept. Text form: `tint:RRGGBBAA`.
public struct TintImageProcessor: ImageProcessor {
    /// The colour painted over the image; its alpha is how strongly.
    public let tint: RGBAColor

    /// A processor tinting with `tint`.
    ///
    /// - Parameter tint: The colour; alpha 0 leaves images unchanged, 255 paints them flat.
    public init(tint: RGBAColor) {
        self.tint = tint
    }

    /// The text form, `tint:rrggbbaa`; ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String { "tint:\(tint.hex)" }

    /// The tinted image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        let colour = PixelMath.unit(tint)
        let mix = ColourMix(added: colour * colour.w, kept: 1 - colour.w)
        return try processImage(item, context: context) { image in
            try image.mapFrames { try PixelMath.map($0, mix) }
        }
    }
}

/// `added + colour × kept` on the colour channels, alpha times `alphaScale`: tint and overlay;
/// Blend also uses it with `alphaScale` to fade an image.
struct ColourMix: PixelTransform {
    let added: SIMD4<Float>
    let kept: Float
    var alphaScale: Float = 1

    @inline(__always)
    func callAsFunction(_ pixel: SIMD4<Float>) -> SIMD4<Float> {
        var result = added + pixel * kept
        result.w = pixel.w * alphaScale
        return result
    }
}
