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
    /// Pixels per point: `size` is the pixel size divided by this. Default 1.
    public var scale: Double

    /// A still image made from `pixels`.
    public init(pixels: PixelBuffer, scale: Double = 1, format: ImageFormat = .unknown) {
        self.frames = [ImageFrame(pixels: pixels)]
        self.loopCount = nil
        self.format = format
        self.scale = scale
    }

    /// An image made from frames that all share one size.
    ///
    /// - Throws: `MagpieError.imageCreationFailed` when `frames` is empty or the sizes differ.
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
    /// Size in points: pixels divided by `scale`.
    public var size: (width: Double, height: Double) {
        (Double(width) / scale, Double(height) / scale)
    }
    /// True when there is more than one frame.
    public var isAnimated: Bool { frames.count > 1 }
    /// Sum of all frame durations.
    public var duration: Duration { frames.reduce(.zero) { $0 + $1.duration } }
    /// Bytes of pixel memory held by all frames; what memory caches charge for the image.
    public var cost: Int { frames.reduce(0) { $0 + $1.pixels.byteCount } }

    /// A copy with every frame's pixels replaced by `transform` of them (sizes may change, uniformly).
    public func mapFrames(_ transform: (PixelBuffer) throws -> PixelBuffer) rethrows -> Image {
        var copy = self
        copy.frames = try frames.map { ImageFrame(pixels: try transform($0.pixels), duration: $0.duration) }
        return copy
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

    /// Creates a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }

    /// Parses `"WxH"` (for example `"256x256"`); nil when malformed or not positive.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }
}
