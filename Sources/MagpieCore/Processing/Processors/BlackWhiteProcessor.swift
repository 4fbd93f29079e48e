/// Greyscale: every pixel becomes its Rec. 709 luma (0.2126 R + 0.7152 G + 0.0722 B on the
/// stored values), alpha kept. Text form: `gray` (or `bw`).
public struct BlackWhiteProcessor: ImageProcessor {
    /// Creates the processor.
    public init() {}

    /// The text form, `gray`, whatever alias was parsed; ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String { "gray" }

    /// The greyscale image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        try processImage(item, context: context) { image in
            try image.mapFrames { try PixelMath.map($0, Luma()) }
        }
    }

    private struct Luma: PixelTransform {
        @inline(__always)
        func callAsFunction(_ pixel: SIMD4<Float>) -> SIMD4<Float> {
            var result = SIMD4(repeating: (pixel * PixelMath.luma709).sum())
            result.w = pixel.w
            return result
        }
    }
}
