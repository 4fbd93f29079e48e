/// Where a crop rectangle sits: a point given as fractions of the width and height
/// (0 is the left or top edge, 1 the right or bottom edge).
public struct CropAnchor: Sendable, Hashable {
    /// Horizontal position, 0 (left) ... 1 (right).
    public var x: Double
    /// Vertical position, 0 (top) ... 1 (bottom).
    public var y: Double

    /// An anchor at fractions `x`, `y`; a crop processor refuses values outside 0...1.
    ///
    /// - Parameters:
    ///   - x: Horizontal position, 0 (left) ... 1 (right).
    ///   - y: Vertical position, 0 (top) ... 1 (bottom).
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The middle.
    public static let center = CropAnchor(x: 0.5, y: 0.5)
    /// The middle of the top edge.
    public static let top = CropAnchor(x: 0.5, y: 0)
    /// The middle of the bottom edge.
    public static let bottom = CropAnchor(x: 0.5, y: 1)
    /// The middle of the left edge.
    public static let left = CropAnchor(x: 0, y: 0.5)
    /// The middle of the right edge.
    public static let right = CropAnchor(x: 1, y: 0.5)
    /// The top-left corner.
    public static let topLeft = CropAnchor(x: 0, y: 0)
    /// The top-right corner.
    public static let topRight = CropAnchor(x: 1, y: 0)
    /// The bottom-left corner.
    public static let bottomLeft = CropAnchor(x: 0, y: 1)
    /// The bottom-right corner.
    public static let bottomRight = CropAnchor(x: 1, y: 1)

    /// The named anchors with their text-form words, canonical order.
    static let named: [(String, CropAnchor)] = [
        ("center", .center), ("top", .top), ("bottom", .bottom), ("left", .left), ("right", .right),
        ("topleft", .topLeft), ("topright", .topRight), ("bottomleft", .bottomLeft), ("bottomright", .bottomRight),
    ]
}

/// Cuts a rectangle of `size` out of images, placed by an anchor.
///
/// The anchor point of the rectangle coincides with the anchor point of the image, so
/// `.topLeft` keeps the top-left corner and `.center` the middle. A size larger than the
/// image is clamped to it. Text form: `crop:WxH[:center|top|...|bottomright|X,Y]`.
public struct CroppingImageProcessor: ImageProcessor {
    /// The size of the rectangle kept, in pixels.
    public let size: PixelSize
    /// Where the rectangle sits.
    public let anchor: CropAnchor

    /// A processor keeping `size` pixels around `anchor`.
    ///
    /// - Parameters:
    ///   - size: The rectangle kept, in pixels; positive, clamped to the image when larger.
    ///   - anchor: Where the rectangle sits (default ``CropAnchor/center``).
    public init(size: PixelSize, anchor: CropAnchor = .center) {
        self.size = size
        self.anchor = anchor
    }

    /// The text form, `crop:WxH:ANCHOR`, the anchor as its name (`center`, `topleft`, …) or as `X,Y`;
    /// ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String {
        let name = CropAnchor.named.first { $0.1 == anchor }?.0
            ?? "\(DecimalText.format(anchor.x)),\(DecimalText.format(anchor.y))"
        return "crop:\(size):\(name)"
    }

    /// The cropped image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   for a non-positive size or an anchor outside 0...1; ``MagpieError/decodingFailed(reason:)`` for data that does
    ///   not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard size.width > 0, size.height > 0 else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "size must be positive"))
        }
        guard (0...1).contains(anchor.x), (0...1).contains(anchor.y) else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "anchor must be within 0...1"))
        }
        return try processImage(item, context: context) { image in
            try image.mapFrames { try Self.crop($0, size: size, anchor: anchor) }
        }
    }

    /// `pixels` cropped to `size` (clamped to the image) placed by `anchor`.
    static func crop(_ pixels: PixelBuffer, size: PixelSize, anchor: CropAnchor) throws -> PixelBuffer {
        let width = min(size.width, pixels.width), height = min(size.height, pixels.height)
        let x = Int((anchor.x * Double(pixels.width - width)).rounded())
        let y = Int((anchor.y * Double(pixels.height - height)).rounded())
        return try crop(pixels, x: x, y: y, width: width, height: height)
    }

    /// The `width` x `height` rectangle at `x`, `y`, which must lie inside `pixels`.
    static func crop(_ pixels: PixelBuffer, x: Int, y: Int, width: Int, height: Int) throws -> PixelBuffer {
        if width == pixels.width && height == pixels.height { return pixels }
        var output = try PixelBuffer.uninitialized(width: width, height: height)
        let rowBytes = width * 4, sourceRowBytes = pixels.bytesPerRow
        pixels.withUnsafeBytes { src in
            output.withUnsafeMutableBytes { dst in
                let from = src.baseAddress! + y * sourceRowBytes + x * 4
                let to = dst.baseAddress!
                for row in 0..<height {
                    (to + row * rowBytes).copyMemory(from: from + row * sourceRowBytes, byteCount: rowBytes)
                }
            }
        }
        return output
    }
}
