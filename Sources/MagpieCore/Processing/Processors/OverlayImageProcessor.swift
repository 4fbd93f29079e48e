/// Mixes a colour into the image where the image is: colour becomes
/// `image × fraction + overlay × (1 − fraction)`, alpha kept (1 is the original, 0 all overlay
/// colour). An overlay with alpha below 255 weighs proportionally less.
/// Text form: `overlay:RRGGBBAA[:FRACTION]`.
public struct OverlayImageProcessor: ImageProcessor {
    /// The colour mixed in.
    public let overlay: RGBAColor
    /// How much of the original colour stays, 0...1.
    public let fraction: Double

    /// A processor mixing `overlay` into the image, keeping `fraction` of the original colour.
    ///
    /// - Parameters:
    ///   - overlay: The colour mixed in; its alpha scales its weight.
    ///   - fraction: How much of the original colour stays, 0...1 (default 0.5); checked when processing.
    public init(overlay: RGBAColor, fraction: Double = 0.5) {
        self.overlay = overlay
        self.fraction = fraction
    }

    /// The text form, `overlay:rrggbbaa:FRACTION`; ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String { "overlay:\(overlay.hex):\(DecimalText.format(fraction))" }

    /// The image with the overlay mixed in, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   when `fraction` is outside 0...1; ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard (0...1).contains(fraction) else {
            throw MagpieError.processingFailed(
                reason: .invalidParameter(processor: identifier, message: "fraction must be within 0...1"))
        }
        let colour = PixelMath.unit(overlay)
        let weight = Float(1 - fraction) * colour.w
        let mix = ColourMix(added: colour * weight, kept: 1 - weight)
        return try processImage(item, context: context) { image in
            try image.mapFrames { try PixelMath.map($0, mix) }
        }
    }
}
