/// How to decode: downsampling target, frames, scale, orientation, and safety limits.
public struct ImageDecodingOptions: Sendable, Equatable {
    /// When set, the decoder may reduce resolution while decoding (JPEG DCT scaling,
    /// WebP scaled decode) but never below what `contentMode` needs to cover this size.
    /// The result is at least that large; resize afterwards for an exact size.
    public var targetSize: PixelSize?
    /// How ``targetSize`` is covered: ``ContentMode/aspectFit`` keeps enough pixels to fit inside it,
    /// ``ContentMode/aspectFill`` to fill it. Default ``ContentMode/aspectFit``.
    public var contentMode: ContentMode
    /// Decode only the first frame of an animation (faster, less memory). Default false.
    public var onlyFirstFrame: Bool
    /// The ``Image/scale`` given to the decoded image (pixels per point). Default 1.
    public var scale: Double
    /// Apply the EXIF orientation of JPEG and WebP so pixels come out upright. Default true.
    public var appliesOrientation: Bool
    /// Limits checked against headers before pixel memory is allocated. Default ``ImageDecodingLimits/default``.
    public var limits: ImageDecodingLimits
    /// Which colours the pixels come out in: ``ColorSpace/asStored`` (the default: samples as stored, the profile
    /// attached to the image) or ``ColorSpace/sRGB`` (converted with lcms2, the profile dropped).
    public var colorSpace: ColorSpace = .asStored

    /// The colour space decoded pixels are delivered in.
    public enum ColorSpace: String, Sendable, Equatable, CaseIterable {
        /// The samples as the file stores them; ``Image/colorProfile`` says what they mean.
        case asStored
        /// Converted to sRGB IEC 61966-2.1 (perceptual intent, alpha untouched); ``Image/colorProfile`` is nil.
        case sRGB
    }

    /// How a target size is covered.
    public enum ContentMode: String, Sendable, Equatable {
        /// The whole image fits inside the target (the longer side matches).
        case aspectFit
        /// The image covers the whole target (the shorter side matches).
        case aspectFill
    }

    /// Options with the given values; the defaults decode everything at full size within the default limits.
    ///
    /// - Parameters:
    ///   - targetSize: The size in pixels the image will be shown at, or nil (the default) for full size.
    ///   - contentMode: Whether the decoded image must fit inside `targetSize` or fill it.
    ///   - onlyFirstFrame: Decode only the first frame of animations.
    ///   - scale: Pixels per point of the result.
    ///   - appliesOrientation: Turn JPEG and WebP pixels upright by their EXIF orientation.
    ///   - limits: The safety limits to enforce.
    public init(
        targetSize: PixelSize? = nil,
        contentMode: ContentMode = .aspectFit,
        onlyFirstFrame: Bool = false,
        scale: Double = 1,
        appliesOrientation: Bool = true,
        limits: ImageDecodingLimits = .default
    ) {
        self.targetSize = targetSize
        self.contentMode = contentMode
        self.onlyFirstFrame = onlyFirstFrame
        self.scale = scale
        self.appliesOrientation = appliesOrientation
        self.limits = limits
    }

    /// Full-size decode with default limits.
    public static let `default` = ImageDecodingOptions()

    /// The options that change the decoded image, as text: `""` for the defaults. Caches add it
    /// to their memory keys so a downsampled decode is never handed to a full-size request.
    public var variantIdentifier: String {
        if targetSize == nil && !onlyFirstFrame && scale == 1 && appliesOrientation && colorSpace == .asStored { return "" }
        var parts: [String] = []
        if let targetSize { parts.append("target=\(targetSize)" + (contentMode == .aspectFill ? ",fill" : "")) }
        if onlyFirstFrame { parts.append("first-frame") }
        if scale != 1 { parts.append("scale=\(scale)") }
        if !appliesOrientation { parts.append("no-orientation") }
        if colorSpace == .sRGB { parts.append("srgb") }
        return parts.joined(separator: ",")
    }

    /// The smallest size, in the orientation of `size`, that still serves `targetSize`;
    /// nil when no target is set. Never larger than `size`.
    func requiredSize(forImageOf size: PixelSize) -> PixelSize? {
        guard let target = targetSize, target.width > 0, target.height > 0 else { return nil }
        let sx = Double(target.width) / Double(size.width)
        let sy = Double(target.height) / Double(size.height)
        let factor = min(1, contentMode == .aspectFit ? min(sx, sy) : max(sx, sy))
        return PixelSize(
            width: max(1, Int((Double(size.width) * factor).rounded(.up))),
            height: max(1, Int((Double(size.height) * factor).rounded(.up))))
    }
}

/// Safety limits against decompression bombs and against processing that would build one: decoders check the first
/// three from headers before allocating; processors check every image they make against all five before allocating it.
public struct ImageDecodingLimits: Sendable, Equatable {
    /// Most pixels a single frame (or animation canvas) may have. Default 100 megapixels.
    public var maxPixelsPerFrame: Int
    /// Most bytes all decoded frames together may take (4 per pixel). Default 1 GiB.
    public var maxTotalBytes: Int
    /// Most frames an animation may have. Default 10,000.
    public var maxFrameCount: Int
    /// Most pixels along either side of an image a processor makes (imgproxy's maximum result dimension). Decoded
    /// sources are not held to it: a panorama wider than it can still be shrunk. Default 65,535, the largest side
    /// JPEG and GIF can store.
    public var maxResultDimension: Int
    /// Most bytes one processing step may hold at once besides its input: the frames it makes plus its scratch (a
    /// resize's weight tables and rows, a blur's float planes). Default 2 GiB.
    public var maxWorkingBytes: Int

    /// Creates limits; the defaults are those of ``default``.
    ///
    /// - Parameters:
    ///   - maxPixelsPerFrame: Most pixels (width × height) of one frame or canvas.
    ///   - maxTotalBytes: Most bytes of decoded pixels over all frames.
    ///   - maxFrameCount: Most frames of an animation.
    ///   - maxResultDimension: Most pixels along either side of a processor's output.
    ///   - maxWorkingBytes: Most bytes of output and scratch one processing step may hold.
    public init(
        maxPixelsPerFrame: Int = 100_000_000, maxTotalBytes: Int = 1 << 30, maxFrameCount: Int = 10_000,
        maxResultDimension: Int = 65_535, maxWorkingBytes: Int = 2 << 30
    ) {
        self.maxPixelsPerFrame = maxPixelsPerFrame
        self.maxTotalBytes = maxTotalBytes
        self.maxFrameCount = maxFrameCount
        self.maxResultDimension = maxResultDimension
        self.maxWorkingBytes = maxWorkingBytes
    }

    /// 100 megapixels per frame, 1 GiB in all, 10,000 frames; results at most 65,535 pixels a side and 2 GiB of
    /// working memory per processing step.
    public static let `default` = ImageDecodingLimits()
}
