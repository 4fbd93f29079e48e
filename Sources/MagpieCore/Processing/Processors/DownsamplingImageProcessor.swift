/// Makes a thumbnail that fits inside `size`, never enlarging.
///
/// Given data, it decodes at reduced resolution (JPEG DCT scaling, WebP scaled decode), which
/// is far cheaper in time and memory than decoding in full and resizing; the rest of the way is
/// a Lanczos-3 resize. Given an image, it only resizes. Text form: `downsample:WxH`.
public struct DownsamplingImageProcessor: ImageProcessor {
    /// The box the result fits inside, in pixels.
    public let size: PixelSize

    /// A processor making images that fit inside `size`.
    ///
    /// - Parameter size: The box in pixels; both sides positive (checked when processing).
    public init(size: PixelSize) {
        self.size = size
    }

    /// The text form, `downsample:WxH`; ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String { "downsample:\(size)" }

    /// The downsampled image; an image already inside `size` is returned unchanged.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   for a non-positive size; ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard size.width > 0, size.height > 0 else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "size must be positive"))
        }
        let image: Image
        switch item {
        case .image(let value): image = value
        case .data(let data):
            var decoding = context.decodingOptions
            decoding.targetSize = size
            decoding.contentMode = .aspectFit
            image = try ImageCoderRegistry.shared.decode(data, options: decoding)
        }
        return try image.resized(toFit: size)
    }
}
