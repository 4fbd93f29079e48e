/// Sharpens images with an unsharp mask on lightness, in the manner of libvips's `sharpen` (which imgproxy's `sharpen`
/// runs): the difference between a pixel's lightness (0...100) and a Gaussian blur of it with standard deviation
/// ``sigma`` is left alone below 2 (flat areas: no noise boost), tripled above, capped at +10 and −20, and added back to
/// every colour channel alike, so hues do not shift. Text form: `sharpen:SIGMA`.
public struct SharpenImageProcessor: ImageProcessor {
    /// The blur's standard deviation in pixels; 0 leaves the image unchanged.
    public let sigma: Double

    /// A processor sharpening with a mask of standard deviation `sigma`.
    public init(sigma: Double) {
        self.sigma = sigma
    }

    /// `sharpen:SIGMA`.
    public var identifier: String { "sharpen:\(DecimalText.format(sigma))" }

    /// The sharpened image, every frame alike.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard sigma.isFinite, sigma >= 0 else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "sigma must be a finite number ≥ 0"))
        }
        return try processImage(item, context: context) { image in
            guard sigma > 0 else { return image }
            let layout = BoxBlur.Layout(width: image.width, height: image.height, sigma: sigma)
            try checkOutput(image.pixelSize, frameCount: image.frames.count, scratchBytes: layout.scratchBytes * 2, context: context)
            return try image.mapFrames { try sharpen($0, context: context) }
        }
    }

    private func sharpen(_ pixels: PixelBuffer, context: ImageProcessingContext) throws -> PixelBuffer {
        let blurred = try BoxBlur.gaussian(pixels, sigma: sigma, isCancelled: context.isCancelled)
        var output = try PixelBuffer.uninitialized(width: pixels.width, height: pixels.height)
        let count = pixels.width * pixels.height
        let luma = PixelMath.luma709
        pixels.withUnsafeBytes { source in
            blurred.withUnsafeBytes { soft in
                output.withUnsafeMutableBytes { destination in
                    let src = source.baseAddress!, blur = soft.baseAddress!, dst = destination.baseAddress!
                    for i in 0..<count {
                        let value = PixelMath.floats(src.loadUnaligned(fromByteOffset: i * 4, as: SIMD4<UInt8>.self))
                        let smooth = PixelMath.floats(blur.loadUnaligned(fromByteOffset: i * 4, as: SIMD4<UInt8>.self))
                        // Lightness differences on a 0...100 scale, as libvips's thresholds are given.
                        let difference = ((value * luma).sum() - (smooth * luma).sum()) * (100 / 255)
                        let magnitude = abs(difference)
                        var change = magnitude <= 2 ? 0 : (magnitude - 2) * 3
                        change = difference < 0 ? -min(change, 20) : min(change, 10)
                        var sharpened = value + SIMD4(repeating: change * 2.55)
                        sharpened.w = value.w
                        dst.storeBytes(of: PixelMath.bytes(PixelMath.clamp(sharpened, to: 255)), toByteOffset: i * 4, as: SIMD4<UInt8>.self)
                    }
                }
            }
        }
        return output
    }
}
