/// Rotates images clockwise by a multiple of 90 degrees (lossless; width and height swap for
/// 90 and 270). Text form: `rotate:90|180|270` (`rotate:0` leaves images unchanged).
public struct RotationImageProcessor: ImageProcessor {
    /// The clockwise angle; a multiple of 90, negative values turn counter-clockwise.
    public let degrees: Int

    /// A processor rotating by `degrees` clockwise.
    ///
    /// - Parameter degrees: A multiple of 90 (checked when processing); negative values turn counter-clockwise.
    public init(degrees: Int) {
        self.degrees = degrees
    }

    /// `degrees` brought into 0..<360 (-90 is 270).
    var normalizedDegrees: Int { (degrees % 360 + 360) % 360 }

    /// The text form, `rotate:D` with D brought into 0..<360, so `-90` gives `rotate:270`;
    /// ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String { "rotate:\(normalizedDegrees)" }

    /// The rotated image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   when `degrees` is not a multiple of 90; ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        let turns = normalizedDegrees / 90
        guard normalizedDegrees % 90 == 0 else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "degrees must be a multiple of 90"))
        }
        return try processImage(item, context: context) { image in
            turns == 0 ? image : try image.mapFrames { try Self.rotate($0, quarterTurns: turns) }
        }
    }

    /// `pixels` turned clockwise `quarterTurns` (1, 2 or 3) times.
    static func rotate(_ pixels: PixelBuffer, quarterTurns: Int) throws -> PixelBuffer {
        if quarterTurns == 2 { return try FlipImageProcessor.flip(pixels, .both) }
        let width = pixels.width, height = pixels.height
        // The output is height x width; source pixel (x, y) lands at column `height - 1 - y`,
        // row `x` for a clockwise turn, and at column `y`, row `width - 1 - x` for three turns.
        var output = try PixelBuffer.uninitialized(width: height, height: width)
        pixels.withUnsafeBytes { raw in
            output.withUnsafeMutableBytes { outRaw in
                let src = raw.baseAddress!, dst = outRaw.baseAddress!
                let outRowBytes = height * 4
                let clockwise = quarterTurns == 1
                for y in 0..<height {
                    let row = src + y * width * 4
                    if clockwise {
                        // Walks down the output column `height - 1 - y`.
                        var to = dst + (height - 1 - y) * 4
                        for x in 0..<width {
                            to.storeBytes(of: row.load(fromByteOffset: x * 4, as: UInt32.self), as: UInt32.self)
                            to += outRowBytes
                        }
                    } else {
                        // Walks up the output column `y`.
                        var to = dst + (width - 1) * outRowBytes + y * 4
                        for x in 0..<width {
                            to.storeBytes(of: row.load(fromByteOffset: x * 4, as: UInt32.self), as: UInt32.self)
                            to -= outRowBytes
                        }
                    }
                }
            }
        }
        return output
    }
}
