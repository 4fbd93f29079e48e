#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes a thumbnail that fits inside `size`, never enlarging.
///
/// Given data, it decodes at reduced resolution (JPEG DCT scaling, WebP scaled decode), which
/// is far cheaper in time and memory than decoding in full and resizing; the rest of the way is
/// a Lanczos-3 resize. Given an image, it only resizes. Text form: `downsample:WxH`.
public struct DownsamplingImageProcessor: ImageProcessor {
    /// The box the result fits inside, in pixels.
    public let size: PixelSize

    /// A processor making images that fit inside `size`.
    public init(size: PixelSize) {
        self.size = size
    }

    public var identifier: String { "downsample:\(size)" }

    /// The downsampled image.
    ///
    /// - Throws: `ProcessingFailureReason.invalidParameter` for a non-positive size; decoding errors for bad data.
    public func process(item: ImageProcessItem, options: MagpieParsedOptions) throws -> Image? {
        guard size.width > 0, size.height > 0 else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "size must be positive"))
        }
        let image: Image
        switch item {
        case .image(let value): image = value
        case .data(let data):
            var decoding = options.effectiveDecodingOptions
            decoding.targetSize = size
            decoding.contentMode = .aspectFit
            image = try ImageCoderRegistry.shared.decode(data, options: decoding)
        }
        return try image.resized(toFit: size)
    }
}
