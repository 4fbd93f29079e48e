#if canImport(Glibc)
import Glibc
#endif

/// Exposure, saturation, brightness and contrast, as Core Image's `CIExposureAdjust` followed
/// by `CIColorControls`, on channel values in 0...1 (alpha kept):
///
/// 1. exposure multiplies by 2^`inputEV`;
/// 2. saturation mixes with the Rec. 709 luma: 0 is grey, 1 unchanged, above 1 more colourful;
/// 3. brightness adds `brightness`;
/// 4. contrast scales the distance from 0.5 by `contrast` (1 unchanged);
///
/// then clamps to 0...1. Text form: `color:B:C:S:EV`, e.g. `color:0.1:1.2:1:0`.
public struct ColorControlsProcessor: ImageProcessor {
    /// Added to every channel, -1...1.
    public let brightness: Double
    /// Scale of the distance from mid-grey, ≥ 0; 1 is unchanged.
    public let contrast: Double
    /// Mix between the luma (0) and the colour (1), ≥ 0.
    public let saturation: Double
    /// Exposure in stops: channels are multiplied by 2^inputEV.
    public let inputEV: Double

    /// A processor applying the given adjustments; (0, 1, 1, 0) leaves images unchanged.
    ///
    /// The ranges are checked when processing, not here.
    /// - Parameters:
    ///   - brightness: Added to every channel, -1...1.
    ///   - contrast: Scale of the distance from mid-grey, ≥ 0.
    ///   - saturation: 0 grey, 1 unchanged, above 1 more colourful.
    ///   - inputEV: Exposure in stops, -20...20.
    public init(brightness: Double, contrast: Double, saturation: Double, inputEV: Double) {
        self.brightness = brightness
        self.contrast = contrast
        self.saturation = saturation
        self.inputEV = inputEV
    }

    /// The text form, `color:B:C:S:EV`, for example `color:0.1:1.2:1:0`; ``ImageProcessorSpec/parse(_:)`` reads it
    /// back.
    public var identifier: String {
        "color:" + [brightness, contrast, saturation, inputEV].map { DecimalText.format($0) }.joined(separator: ":")
    }

    /// What is wrong with the parameters, nil when they are usable.
    var problem: String? {
        if !(-1...1).contains(brightness) { return "brightness must be within -1...1" }
        if !(contrast >= 0 && contrast.isFinite) { return "contrast must be a finite number ≥ 0" }
        if !(saturation >= 0 && saturation.isFinite) { return "saturation must be a finite number ≥ 0" }
        if !(-20...20).contains(inputEV) { return "inputEV must be within -20...20" }
        return nil
    }

    /// The adjusted image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   for parameters outside their ranges (see the properties; `inputEV` within -20...20);
    ///   ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        if let problem {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: problem))
        }
        let adjust = Adjust(
            gain: Float(exp2(inputEV)), saturation: Float(saturation), brightness: Float(brightness),
            contrast: Float(contrast))
        return try processImage(item, context: context) { image in
            try image.mapFrames { try PixelMath.map($0, adjust) }
        }
    }

    private struct Adjust: PixelTransform {
        let gain, saturation, brightness, contrast: Float

        @inline(__always)
        func callAsFunction(_ pixel: SIMD4<Float>) -> SIMD4<Float> {
            var colour = pixel * gain
            let luma = (colour * PixelMath.luma709).sum()
            colour = luma + (colour - luma) * saturation
            colour = (colour + brightness - 0.5) * contrast + 0.5
            colour.w = pixel.w
            return colour
        }
    }
}
