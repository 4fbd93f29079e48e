#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One frame of an image: its pixels and, for animations, how long it shows.
public struct ImageFrame: Sendable, Equatable {
    /// The frame's pixels (the full canvas for animations, already composited).
    public var pixels: PixelBuffer
    /// How long the frame is shown, as stored in the file (no minimum applied). Zero for stills.
    public var duration: Duration

    /// Creates a frame.
    ///
    /// - Parameters:
    ///   - pixels: The frame's pixels; for an animation, the whole canvas.
    ///   - duration: How long the frame shows. Defaults to zero, which is right for stills.
    public init(pixels: PixelBuffer, duration: Duration = .zero) {
        self.pixels = pixels
        self.duration = duration
    }
}

/// A decoded image: one or more frames of straight-alpha RGBA8 pixels.
///
/// `Image` is a value: copies share their pixel storage until one of them is
/// mutated (copy-on-write), so passing images between tasks and caches is cheap.
/// Every frame of an animation has the canvas size.
public struct Image: Sendable, Equatable {
    /// The frames; never empty. A still image has exactly one.
    public private(set) var frames: [ImageFrame]
    /// Loop count stored in the file: 0 means forever, nil means the file stores none (play once).
    public var loopCount: Int?
    /// The format the image was decoded from (`.unknown` for images built in memory).
    public var format: ImageFormat
    /// Pixels per point: ``size`` is the pixel size divided by this. Default 1.
    public var scale: Double
    /// What the samples' colours mean, as the file stated it (ICC profile, CICP, gAMA/cHRM); nil when it stated
    /// nothing, which means sRGB. Processing keeps it and encoders embed it, so a Display P3 photo stays one.
    public var colorProfile: ColorProfile? {
        get { annotations?.value.colorProfile }
        set { annotate { $0.colorProfile = newValue } }
    }
    /// The EXIF and XMP the file carried (written back only when ``ImageEncodingOptions/metadata`` says keep).
    public var metadata: ImageMetadata {
        get { annotations?.value.metadata ?? .none }
        set { annotate { $0.metadata = newValue } }
    }
    /// Bit depth, alpha channel and container entries of the file it was decoded from; nil for images made in memory.
    public var sourceInfo: ImageSourceInfo? {
        get { annotations?.value.sourceInfo }
        set { annotate { $0.sourceInfo = newValue } }
    }

    /// What the file said besides its pixels, behind one reference: together these are about 200 bytes with six
    /// references, which every copy of an image (each cache hit makes several) would otherwise move and retain.
    /// Nil when there is nothing to say, as for images made in memory.
    private var annotations: AnnotationBox?

    private struct Annotations: Sendable, Equatable {
        var colorProfile: ColorProfile?
        var metadata: ImageMetadata = .none
        var sourceInfo: ImageSourceInfo?
    }

    /// Immutable, so shared freely; a change makes a new box.
    private final class AnnotationBox: Sendable, Equatable {
        let value: Annotations
        init(_ value: Annotations) { self.value = value }
        static func == (a: AnnotationBox, b: AnnotationBox) -> Bool { a === b || a.value == b.value }
    }

    private mutating func annotate(_ change: (inout Annotations) -> Void) {
        var value = annotations?.value ?? Annotations()
        change(&value)
        // Nil for the defaults, so that equal images compare equal however they were made.
        annotations = value == Annotations() ? nil : AnnotationBox(value)
    }

    /// A still image made from `pixels`.
    ///
    /// - Parameters:
    ///   - pixels: The single frame's pixels.
    ///   - scale: Pixels per point (default 1).
    ///   - format: The format the pixels came from; ``ImageFormat/unknown`` (the default) for images made in memory.
    public init(pixels: PixelBuffer, scale: Double = 1, format: ImageFormat = .unknown) {
        self.frames = [ImageFrame(pixels: pixels)]
        self.loopCount = nil
        self.format = format
        self.scale = scale
    }

    /// An image made from frames that all share one size.
    ///
    /// - Parameters:
    ///   - frames: The frames in display order; at least one, all the same pixel size.
    ///   - loopCount: How often the animation repeats: 0 (the default) means forever, nil means play once.
    ///     Ignored (stored as nil) when there is only one frame.
    ///   - format: The format the frames came from (default ``ImageFormat/unknown``).
    ///   - scale: Pixels per point (default 1).
    /// - Throws: ``MagpieError/imageCreationFailed(reason:)`` with
    ///   ``MagpieError/ImageCreationFailureReason/noFrames`` when `frames` is empty, or
    ///   ``MagpieError/ImageCreationFailureReason/frameSizeMismatch(expected:actual:)`` when the sizes differ.
    public init(frames: [ImageFrame], loopCount: Int? = 0, format: ImageFormat = .unknown, scale: Double = 1) throws {
        guard let first = frames.first else {
            throw MagpieError.imageCreationFailed(reason: .noFrames)
        }
        for frame in frames where frame.pixels.width != first.pixels.width || frame.pixels.height != first.pixels.height {
            throw MagpieError.imageCreationFailed(
                reason: .frameSizeMismatch(
                    expected: PixelSize(width: first.pixels.width, height: first.pixels.height),
                    actual: PixelSize(width: frame.pixels.width, height: frame.pixels.height)))
        }
        self.frames = frames
        self.loopCount = frames.count > 1 ? loopCount : nil
        self.format = format
        self.scale = scale
    }

    /// A still image from raw bytes: `width * height * 4`, RGBA, straight alpha, rows top to bottom.
    ///
    /// - Parameters:
    ///   - width: Width in pixels; must be positive.
    ///   - height: Height in pixels; must be positive.
    ///   - rgba: Exactly `width * height * 4` bytes.
    ///   - scale: Pixels per point (default 1).
    /// - Throws: ``MagpieError/imageCreationFailed(reason:)`` for a non-positive size, a byte count
    ///   that does not match, or when the pixels cannot be allocated.
    public init(width: Int, height: Int, rgba: [UInt8], scale: Double = 1) throws {
        self.init(pixels: try PixelBuffer(width: width, height: height, rgba: rgba), scale: scale)
    }

    /// The first frame's pixels.
    public var pixels: PixelBuffer { frames[0].pixels }
    /// Width in pixels.
    public var width: Int { frames[0].pixels.width }
    /// Height in pixels.
    public var height: Int { frames[0].pixels.height }
    /// Size in pixels.
    public var pixelSize: PixelSize { PixelSize(width: width, height: height) }
    /// Size in points: pixels divided by ``scale``.
    public var size: (width: Double, height: Double) {
        (Double(width) / scale, Double(height) / scale)
    }
    /// True when there is more than one frame.
    public var isAnimated: Bool { frames.count > 1 }
    /// Sum of all frame durations; zero for a still image.
    public var duration: Duration { frames.reduce(.zero) { $0 + $1.duration } }
    /// Bytes of pixel memory held by all frames (`width * height * 4` per frame); what memory caches charge for the
    /// image.
    public var cost: Int { frames.reduce(0) { $0 + $1.pixels.byteCount } }

    /// A copy with every frame's pixels replaced by `transform` of them.
    ///
    /// Durations, loop count, format and scale are kept. `transform` may change the size,
    /// but must change every frame the same way, since all frames of an image share one size.
    ///
    /// - Parameter transform: Called once per frame, in order.
    /// - Returns: The transformed image.
    /// - Throws: Whatever `transform` throws; the first error stops the mapping.
    public func mapFrames(_ transform: (PixelBuffer) throws -> PixelBuffer) rethrows -> Image {
        var copy = self
        copy.frames = try frames.map { ImageFrame(pixels: try transform($0.pixels), duration: $0.duration) }
        return copy
    }

    /// Changes every frame's pixels in place (no copy when the image holds the only reference to them).
    mutating func updatePixels(_ body: (inout PixelBuffer) throws -> Void) rethrows {
        for index in frames.indices { try body(&frames[index].pixels) }
    }

    /// The kinds of metadata the image carries, sorted: `exif`, `gps`, `icc`, `xmp`.
    public var metadataKinds: [MetadataKind] {
        var kinds: [MetadataKind] = []
        if metadata.exif != nil { kinds.append(.exif) }
        if metadata.hasGPS { kinds.append(.gps) }
        if colorProfile?.iccData != nil { kinds.append(.icc) }
        if metadata.xmp != nil { kinds.append(.xmp) }
        return kinds
    }

    /// A still copy holding only the first frame.
    public var firstFrameOnly: Image {
        var copy = self
        copy.frames = [ImageFrame(pixels: frames[0].pixels)]
        copy.loopCount = nil
        return copy
    }
}

/// A size in whole pixels.
public struct PixelSize: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a size; no validation, so zero and negative values are kept as given.
    ///
    /// - Parameters:
    ///   - width: Width in pixels.
    ///   - height: Height in pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `WxH`, for example `256x128`: the form ``init(parsing:)`` reads.
    public var description: String { "\(width)x\(height)" }

    /// Parses `"WxH"` (for example `"256x256"`; the `x` may be upper case); nil when malformed or not positive.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }
}
