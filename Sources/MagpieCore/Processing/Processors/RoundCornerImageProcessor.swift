/// The radius of rounded corners: in pixels or as a fraction of the image's width or height.
public enum CornerRadius: Sendable, Hashable {
    /// A radius in pixels (text form `R`, for example `round:12`).
    case point(Double)
    /// A fraction of the image width (0.5 on a square image makes a circle); text form `N%`, so `50%` is 0.5.
    case widthFraction(Double)
    /// A fraction of the image height; text form `N%h`, so `25%h` is 0.25.
    case heightFraction(Double)

    /// The radius in pixels for an image of `width` x `height`.
    func pixels(width: Int, height: Int) -> Double {
        switch self {
        case .point(let value): value
        case .widthFraction(let fraction): fraction * Double(width)
        case .heightFraction(let fraction): fraction * Double(height)
        }
    }

    var isValid: Bool {
        switch self {
        case .point(let v), .widthFraction(let v), .heightFraction(let v): v.isFinite && v >= 0
        }
    }
}

/// A set of rectangle corners.
public struct RectCorner: OptionSet, Sendable, Hashable {
    /// The corners as bits (topLeft 1, topRight 2, bottomLeft 4, bottomRight 8).
    public let rawValue: Int

    /// Creates a set from its bits (see ``rawValue``); other bits are kept but mean nothing.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The top-left corner.
    public static let topLeft = RectCorner(rawValue: 1 << 0)
    /// The top-right corner.
    public static let topRight = RectCorner(rawValue: 1 << 1)
    /// The bottom-left corner.
    public static let bottomLeft = RectCorner(rawValue: 1 << 2)
    /// The bottom-right corner.
    public static let bottomRight = RectCorner(rawValue: 1 << 3)
    /// All four corners.
    public static let all: RectCorner = [.topLeft, .topRight, .bottomLeft, .bottomRight]
}

/// Rounds the corners of images, anti-aliased, optionally after filling a target size.
///
/// Pixels outside the rounded rectangle become transparent, or with `backgroundColor` the
/// whole image is composited over that colour. Text form:
/// `round:R[:size=WxH][:corners=tl,tr,bl,br][:bg=RRGGBBAA]` with R in pixels, `N%` of the width or `N%h` of the height.
public struct RoundCornerImageProcessor: ImageProcessor {
    /// The corner radius, resolved against the (target) size.
    public let cornerRadius: CornerRadius
    /// When set, images are first scaled to cover this size and centre-cropped to it.
    public let targetSize: PixelSize?
    /// The corners that are rounded.
    public let roundingCorners: RectCorner
    /// When set, the result is composited over this colour instead of keeping transparent corners.
    public let backgroundColor: RGBAColor?

    /// A processor rounding `roundingCorners` with `cornerRadius`.
    ///
    /// - Parameters:
    ///   - cornerRadius: The radius, in pixels or relative to the (target) size; must not be negative.
    ///   - targetSize: When set, images are first scaled to cover it and centre-cropped; default nil.
    ///   - roundingCorners: The corners rounded (default all).
    ///   - backgroundColor: When set, composite the result over it instead of keeping transparent corners.
    public init(
        cornerRadius: CornerRadius, targetSize: PixelSize? = nil, roundingCorners: RectCorner = .all,
        backgroundColor: RGBAColor? = nil
    ) {
        self.cornerRadius = cornerRadius
        self.targetSize = targetSize
        self.roundingCorners = roundingCorners
        self.backgroundColor = backgroundColor
    }

    /// A processor rounding with a radius of `cornerRadius` pixels.
    ///
    /// - Parameters:
    ///   - cornerRadius: The radius in pixels; must not be negative.
    ///   - targetSize: When set, images are first scaled to cover it and centre-cropped; default nil.
    ///   - roundingCorners: The corners rounded (default all).
    ///   - backgroundColor: When set, composite the result over it instead of keeping transparent corners.
    public init(
        cornerRadius: Double, targetSize: PixelSize? = nil, roundingCorners: RectCorner = .all,
        backgroundColor: RGBAColor? = nil
    ) {
        self.init(cornerRadius: .point(cornerRadius), targetSize: targetSize, roundingCorners: roundingCorners,
                  backgroundColor: backgroundColor)
    }

    /// The text form, `round:R`, plus `:size=WxH`, `:corners=…` and `:bg=rrggbbaa` when set;
    /// ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String {
        var text = "round:\(cornerRadius.specText)"
        if let targetSize { text += ":size=\(targetSize)" }
        if roundingCorners != .all { text += ":corners=\(roundingCorners.specText)" }
        if let backgroundColor { text += ":bg=\(backgroundColor.hex)" }
        return text
    }

    /// The rounded image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   for a negative radius or a non-positive target size; ``MagpieError/decodingFailed(reason:)`` for data that
    ///   does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard cornerRadius.isValid else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "radius must be a non-negative number"))
        }
        if let targetSize, targetSize.width <= 0 || targetSize.height <= 0 {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "size must be positive"))
        }
        return try processImage(item, context: context) { image in
            var image = image
            if let targetSize {
                let cover = image.pixelSize.filling(targetSize)
                let scaled = PixelSize(width: max(cover.width, targetSize.width), height: max(cover.height, targetSize.height))
                // The intermediate cover can be far larger than the target (a 1×1000 strip covering 1000×1000); frames
                // are cropped one at a time, so one scaled frame and its resize's scratch are held at once.
                let resizing = ImageResampler.scratchBytes(from: image.pixelSize, to: scaled)
                try checkOutput(scaled, frameCount: 1, scratchBytes: resizing, context: context)
                let coverBytes = scaled.width.saturatingMultiply(scaled.height).saturatingMultiply(4)
                try checkOutput(
                    targetSize, frameCount: image.frames.count, scratchBytes: coverBytes.saturatingAdd(resizing), context: context)
                image = try image.mapFrames {
                    try CroppingImageProcessor.crop(
                        ImageResampler.resize($0, to: scaled, isCancelled: context.isCancelled), size: targetSize, anchor: .center)
                }
            }
            let shape = RoundedRectShape(
                width: image.width, height: image.height,
                radius: cornerRadius.pixels(width: image.width, height: image.height), corners: roundingCorners)
            return image.mapFrames { round($0, shape: shape) }
        }
    }

    private func round(_ pixels: PixelBuffer, shape: RoundedRectShape) -> PixelBuffer {
        // Nothing to clip or fill: skip the copy that mutable access to shared pixels makes.
        if shape.maxRadius <= 0 && backgroundColor == nil { return pixels }
        var output = pixels
        let width = pixels.width, height = pixels.height
        output.withUnsafeMutableBytes { raw in
            let p = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            // Only pixels within the corner boxes can be partly outside the shape.
            shape.forEachPixelNearCorners { x, y in
                let coverage = shape.coverage(x: x, y: y)
                guard coverage < 1 else { return }
                let a = p + (y * width + x) * 4 + 3
                a.pointee = UInt8(Float(a.pointee) * coverage + 0.5)
            }
            guard let background = backgroundColor else { return }
            let bottom = PixelBlend.straight(background)
            for i in 0..<(width * height) {
                let q = p + i * 4
                guard q[3] != 255 else { continue }
                PixelBlend.store(PixelBlend.over(PixelBlend.load(q), bottom), to: q)
            }
        }
        return output
    }
}

/// A rectangle with some corners rounded, as a signed distance field, for anti-aliased masks.
struct RoundedRectShape {
    let minX, minY, maxX, maxY: Double
    /// Radii of the top-left, top-right, bottom-left, bottom-right corners (0 when not rounded).
    let radii: SIMD4<Double>
    let isEmpty: Bool

    /// The shape from `minX, minY` to `maxX, maxY` in pixel coordinates; radii are clamped to half the shorter side.
    init(minX: Double, minY: Double, maxX: Double, maxY: Double, radius: Double, corners: RectCorner) {
        let r = SIMD4<Double>(corners.contains(.topLeft) ? radius : 0, corners.contains(.topRight) ? radius : 0,
                              corners.contains(.bottomLeft) ? radius : 0, corners.contains(.bottomRight) ? radius : 0)
        self.init(minX: minX, minY: minY, maxX: maxX, maxY: maxY, radii: r)
    }

    /// The shape covering a whole `width` x `height` image.
    init(width: Int, height: Int, radius: Double, corners: RectCorner) {
        self.init(minX: 0, minY: 0, maxX: Double(width), maxY: Double(height), radius: radius, corners: corners)
    }

    private init(minX: Double, minY: Double, maxX: Double, maxY: Double, radii: SIMD4<Double>) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
        isEmpty = maxX <= minX || maxY <= minY
        let limit = isEmpty ? 0 : min(maxX - minX, maxY - minY) / 2
        self.radii = radii.clamped(lowerBound: .zero, upperBound: SIMD4(repeating: limit))
    }

    /// The shape `inset` pixels smaller on every side, its radii shrunk by the same amount.
    func inset(by inset: Double) -> RoundedRectShape {
        RoundedRectShape(minX: minX + inset, minY: minY + inset, maxX: maxX - inset, maxY: maxY - inset,
                         radii: radii - inset)
    }

    /// The largest corner radius.
    var maxRadius: Double { radii.max() }

    /// The fraction (0...1) of the pixel at `x`, `y` inside the shape, from the distance of its
    /// centre to the outline (exact on straight edges, within a few percent on arcs).
    @inline(__always)
    func coverage(x: Int, y: Int) -> Float {
        if isEmpty { return 0 }
        let px = Double(x) + 0.5, py = Double(y) + 0.5
        let cx = (minX + maxX) / 2, cy = (minY + maxY) / 2
        let r = px < cx ? (py < cy ? radii[0] : radii[2]) : (py < cy ? radii[1] : radii[3])
        let qx = abs(px - cx) - (maxX - minX) / 2 + r, qy = abs(py - cy) - (maxY - minY) / 2 + r
        let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
        let distance = outside + min(max(qx, qy), 0) - r
        return Float(min(max(0.5 - distance, 0), 1))
    }

    /// Calls `body` once for every pixel of a `maxX` x `maxY` image within `ceil(maxRadius)` of two
    /// edges at a corner: the only pixels an image-sized shape can cover partly.
    func forEachPixelNearCorners(_ body: (Int, Int) -> Void) {
        let width = Int(maxX), height = Int(maxY)
        let band = Int(maxRadius.rounded(.up))
        guard band > 0 else { return }
        for (x0, x1) in GeometryBands.split(length: width, band: band) where x1 > x0 {
            for (y0, y1) in GeometryBands.split(length: height, band: band) where y1 > y0 {
                for y in y0..<y1 { for x in x0..<x1 { body(x, y) } }
            }
        }
    }
}

enum GeometryBands {
    /// The disjoint ranges `0..<band` and `length - band..<length` (clamped), as (start, end) pairs.
    static func split(length: Int, band: Int) -> [(Int, Int)] {
        let first = min(band, length)
        return [(0, first), (max(length - band, first), length)]
    }
}

/// Straight-alpha blending in floats: colour 0...255, alpha 0...1.
enum PixelBlend {
    @inline(__always)
    static func load(_ p: UnsafeMutablePointer<UInt8>) -> SIMD4<Float> {
        SIMD4(Float(p[0]), Float(p[1]), Float(p[2]), Float(p[3]) / 255)
    }

    static func straight(_ color: RGBAColor) -> SIMD4<Float> {
        SIMD4(Float(color.red), Float(color.green), Float(color.blue), Float(color.alpha) / 255)
    }

    /// `top` drawn over `bottom` (Porter-Duff source-over), computed premultiplied.
    @inline(__always)
    static func over(_ top: SIMD4<Float>, _ bottom: SIMD4<Float>) -> SIMD4<Float> {
        let alpha = top.w + bottom.w * (1 - top.w)
        guard alpha > 0 else { return .zero }
        let rgb = (top * top.w + bottom * (bottom.w * (1 - top.w))) / alpha
        return SIMD4(rgb.x, rgb.y, rgb.z, alpha)
    }

    @inline(__always)
    static func store(_ v: SIMD4<Float>, to p: UnsafeMutablePointer<UInt8>) {
        let c = (v * SIMD4(1, 1, 1, 255) + 0.5).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: 255))
        p[0] = UInt8(c.x)
        p[1] = UInt8(c.y)
        p[2] = UInt8(c.z)
        p[3] = UInt8(c.w)
    }
}
