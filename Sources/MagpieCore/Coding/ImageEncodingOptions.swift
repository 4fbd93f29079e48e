#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How to encode: quality, progressive JPEG, lossless WebP, background and frames.
///
/// Options that a format does not use are ignored (PNG and GIF ignore ``quality``, for example).
public struct ImageEncodingOptions: Sendable, Equatable {
    /// Lossy quality 1...100 (JPEG, lossy WebP). Default 85. Values outside the range make those encoders
    /// throw ``MagpieError/EncodingFailureReason/invalidOption(_:)``.
    public var quality: Int
    /// Write a progressive JPEG. Default false.
    public var progressive: Bool
    /// Write lossless WebP instead of lossy. Default false.
    public var lossless: Bool
    /// Colour under translucent pixels when the format has no alpha (JPEG). Default white.
    public var background: RGBAColor
    /// Write only the first frame even when the image is animated. Default false.
    public var onlyFirstFrame: Bool

    /// Options with the given values; the defaults are those of ``default``.
    ///
    /// - Parameters:
    ///   - quality: Lossy quality, 1...100.
    ///   - progressive: Write a progressive JPEG.
    ///   - lossless: Write lossless WebP.
    ///   - background: Colour translucent pixels are composited over for formats without alpha.
    ///   - onlyFirstFrame: Write a still image even for an animation.
    public init(
        quality: Int = 85, progressive: Bool = false, lossless: Bool = false,
        background: RGBAColor = .white, onlyFirstFrame: Bool = false
    ) {
        self.quality = quality
        self.progressive = progressive
        self.lossless = lossless
        self.background = background
        self.onlyFirstFrame = onlyFirstFrame
    }

    /// Quality 85, baseline, lossy, white background, all frames.
    public static let `default` = ImageEncodingOptions()

    func validatedQuality() throws -> Int32 {
        guard (1...100).contains(quality) else {
            throw MagpieError.encodingFailed(reason: .invalidOption("quality \(quality) is outside 1...100"))
        }
        return Int32(quality)
    }
}
