#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Mixes a colour into the image where the image is: colour becomes
/// `image × fraction + overlay × (1 − fraction)`, alpha kept (1 is the original, 0 all overlay
/// colour). An overlay with alpha below 255 weighs proportionally less. Kingfisher's
/// `OverlayImageProcessor`. Text form: `overlay:RRGGBBAA[:FRACTION]`.
public struct OverlayImageProcessor: ImageProcessor {
    /// The colour mixed in.
    public let overlay: RGBAColor
    /// How much of the original colour stays, 0...1.
    public let fraction: Double

    /// A processor mixing `overlay` into the image, keeping `fraction` of the original colour.
    public init(overlay: RGBAColor, fraction: Double = 0.5) {
        self.overlay = overlay
        self.fraction = fraction
    }

    public var identifier: String { "overlay:\(overlay.hex):\(DecimalText.format(fraction))" }

    /// The image with the overlay mixed in, every frame alike.
    ///
    /// - Throws: `ProcessingFailureReason.invalidParameter` when `fraction` is outside 0...1;
    ///   decoding errors for bad data.
    public func process(item: ImageProcessItem, options: MagpieParsedOptions) throws -> Image? {
        guard (0...1).contains(fraction) else {
            throw MagpieError.processingFailed(
                reason: .invalidParameter(processor: identifier, message: "fraction must be within 0...1"))
        }
        let colour = PixelMath.unit(overlay)
        let weight = Float(1 - fraction) * colour.w
        let mix = ColourMix(added: colour * weight, kept: 1 - weight)
        return try processImage(item, options: options) { image in
            try image.mapFrames { try PixelMath.map($0, mix) }
        }
    }
}
