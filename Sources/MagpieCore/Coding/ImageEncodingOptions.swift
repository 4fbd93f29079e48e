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
    /// Which metadata the file gets. Default ``MetadataPolicy/none``: the colour profile only.
    public var metadata: MetadataPolicy = .none
    /// With ``MetadataPolicy/none``, still write the source EXIF's Copyright and Artist fields (imgproxy's
    /// `keep_copyright`), in a new EXIF block holding nothing else. Default false.
    public var keepsCopyright = false
    /// Encoder effort for formats that have one (AVIF: 0 slowest/best ... 10 fastest); nil for the encoder's default.
    public var speed: Int?

    /// What an encoder writes besides pixels.
    public enum MetadataPolicy: String, Sendable, Equatable, CaseIterable {
        /// The colour profile only (so colours stay right); no EXIF, no XMP. The default.
        case none
        /// The colour profile, EXIF (its orientation reset to 1: pixels are already upright) and XMP.
        case keep
        /// Nothing at all: the pixels are converted to sRGB first, so colours do not silently change.
        case strip
    }

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
