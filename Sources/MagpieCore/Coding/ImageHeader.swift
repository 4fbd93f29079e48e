/// What an image file's header declares, read without decoding any pixels: enough to describe an image that is
/// too large to decode, or to check it against ``ImageDecodingLimits`` first.
public struct ImageHeader: Sendable, Equatable {
    /// The format the bytes are in.
    public var format: ImageFormat
    /// The stored width in pixels (the canvas of an animation; before any EXIF orientation).
    public var width: Int
    /// The stored height in pixels (the canvas of an animation; before any EXIF orientation).
    public var height: Int
    /// How many frames the file holds, when that is known without decoding: 1 for a still JPEG, PNG or WebP, the
    /// APNG's declared count, the GIF's image blocks, the animated WebP's frames; nil when the file ends before
    /// the count is certain.
    public var frameCount: Int?

    /// A header with the given facts.
    ///
    /// - Parameters:
    ///   - format: The format.
    ///   - width: Width in pixels.
    ///   - height: Height in pixels.
    ///   - frameCount: Frames, nil when unknown.
    public init(format: ImageFormat, width: Int, height: Int, frameCount: Int?) {
        self.format = format
        self.width = width
        self.height = height
        self.frameCount = frameCount
    }

    /// `width × height`: what ``ImageDecodingLimits/maxPixelsPerFrame`` is checked against.
    public var pixelCount: Int { width.multipliedReportingOverflow(by: height).overflow ? .max : width * height }
}
