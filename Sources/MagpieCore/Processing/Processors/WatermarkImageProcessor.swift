/// Draws a watermark image over images (imgproxy's `watermark`): at a ``Gravity`` with offsets, or repeated over the
/// whole image with gaps between the copies, at an ``opacity``, optionally scaled to a fraction of the image's size
/// (fitted inside `scale × width` by `scale × height`, enlarging when needed). Where it is placed it may hang over the
/// edges; what falls outside is cut. Text form: `watermark:ID:OPACITY[:POSITION[:X:Y]][:scale=S]`, where ID names the
/// watermark (its pixels are not part of the text).
public struct WatermarkImageProcessor: ImageProcessor {
    /// Where the watermark goes.
    public enum Placement: Sendable, Hashable {
        /// One copy, placed by the gravity (its offsets move it; a smart gravity is the centre).
        case gravity(Gravity)
        /// Copies over the whole image, an odd number on each axis centred on it, with these gaps between them (pixels
        /// when 1 or more, times the offset scale; else fractions of the image's width and height).
        case replicate(gapX: Double, gapY: Double)
        /// Copies with their top-left corners at these pixels of the image (x, y pairs; offsets are not scaled):
        /// placement worked out by the caller, as thumbor's `watermark` does.
        case origins([Origin])
    }

    /// A copy's top-left corner in the image's pixels (may lie outside it: the copy is cut).
    public struct Origin: Sendable, Hashable {
        /// Pixels from the left edge.
        public var x: Int
        /// Pixels from the top edge.
        public var y: Int

        /// The corner at (`x`, `y`).
        public init(x: Int, y: Int) {
            self.x = x
            self.y = y
        }
    }

    /// The watermark's pixels (its first frame).
    public let watermark: Image
    /// Names the watermark in ``identifier`` (two processors with the same name must draw the same pixels).
    public let watermarkName: String
    /// 0 (invisible) ... 1 (the watermark's own alpha).
    public let opacity: Double
    /// Where it goes.
    public let placement: Placement
    /// The watermark's size as a fraction of the image's (fitted into it), or nil for its own pixel size.
    public let scale: Double?
    /// What pixel offsets and gaps are multiplied by (a device-pixel ratio; default 1).
    public let offsetScale: Double

    /// A processor drawing `watermark`.
    public init(
        watermark: Image, named watermarkName: String, opacity: Double, placement: Placement = .gravity(.center),
        scale: Double? = nil, offsetScale: Double = 1
    ) {
        self.watermark = watermark
        self.watermarkName = watermarkName
        self.opacity = opacity
        self.placement = placement
        self.scale = scale
        self.offsetScale = offsetScale
    }

    /// `watermark:NAME:OPACITY:POSITION`, then `:scale=` and `:dpr=` when set.
    public var identifier: String {
        var text = "watermark:\(watermarkName):\(DecimalText.format(opacity)):"
        switch placement {
        case .gravity(let gravity): text += gravity.specText
        case .replicate(let x, let y): text += "re:\(DecimalText.format(x)):\(DecimalText.format(y))"
        case .origins(let points): text += "at:" + points.map { "\($0.x),\($0.y)" }.joined(separator: ";")
        }
        if let scale { text += ":scale=\(DecimalText.format(scale))" }
        if offsetScale != 1 { text += ":dpr=\(DecimalText.format(offsetScale))" }
        return text
    }

    /// The watermarked image, every frame alike; the image itself at opacity 0.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard opacity.isFinite, (0...1).contains(opacity) else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "opacity must be within 0...1"))
        }
        if let scale, !(scale.isFinite && scale > 0) {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "scale must be positive"))
        }
        return try processImage(item, context: context) { image in
            guard opacity > 0 else { return image }
            var mark = watermark.pixels
            if let scale {
                let box = PixelSize(
                    width: max(1, Gravity.roundEven(Double(image.width) * scale)),
                    height: max(1, Gravity.roundEven(Double(image.height) * scale)))
                let size = mark.pixelSize.fitting(in: box)
                try checkOutput(size, frameCount: 1, scratchBytes: ImageResampler.scratchBytes(from: mark.pixelSize, to: size), context: context)
                mark = try ImageResampler.resize(mark, to: size, isCancelled: context.isCancelled)
            }
            let origins = self.origins(image: image.pixelSize, mark: mark.pixelSize)
            return image.mapFrames { frame in
                var output = frame
                for origin in origins { Compositing.over(&output, mark, at: origin, opacity: Float(opacity)) }
                return output
            }
        }
    }

    /// Where each copy's top-left corner goes.
    func origins(image: PixelSize, mark: PixelSize) -> [(x: Int, y: Int)] {
        switch placement {
        case .origins(let points):
            return points.map { (x: $0.x, y: $0.y) }
        case .gravity(let gravity):
            let origin = gravity.placement(outer: image, inner: mark, offsetScale: offsetScale, allowOverflow: true)
            return [origin]
        case .replicate(let gapX, let gapY):
            let strideX = mark.width + max(0, Gravity.offset(gapX, along: image.width, scale: offsetScale))
            let strideY = mark.height + max(0, Gravity.offset(gapY, along: image.height, scale: offsetScale))
            // An odd number of copies on each axis, the middle one centred, enough to cover the image.
            func copies(_ length: Int, _ stride: Int) -> Int {
                let needed = (length + stride - 1) / stride + 1
                return needed % 2 == 1 ? needed : needed + 1
            }
            let columns = copies(image.width, strideX), rows = copies(image.height, strideY)
            let firstX = (image.width - mark.width) / 2 - (columns / 2) * strideX
            let firstY = (image.height - mark.height) / 2 - (rows / 2) * strideY
            var origins: [(x: Int, y: Int)] = []
            for row in 0..<rows {
                for column in 0..<columns {
                    let x = firstX + column * strideX, y = firstY + row * strideY
                    if x < image.width, y < image.height, x + mark.width > 0, y + mark.height > 0 { origins.append((x, y)) }
                }
            }
            return origins
        }
    }
}

/// Source-over compositing of straight-alpha pixels.
enum Compositing {
    /// `top` drawn over `base` with its top-left corner at `origin` (what falls outside `base` is cut), its alpha
    /// multiplied by `opacity`.
    static func over(_ base: inout PixelBuffer, _ top: PixelBuffer, at origin: (x: Int, y: Int), opacity: Float) {
        let left = max(0, origin.x), upper = max(0, origin.y)
        let right = min(base.width, origin.x + top.width), lower = min(base.height, origin.y + top.height)
        guard left < right, upper < lower else { return }
        let baseWidth = base.width
        top.withUnsafeBytes { topRaw in
            base.withUnsafeMutableBytes { baseRaw in
                let src = topRaw.baseAddress!, dst = baseRaw.baseAddress!
                for y in upper..<lower {
                    for x in left..<right {
                        let s = PixelMath.floats(src.loadUnaligned(
                            fromByteOffset: ((y - origin.y) * top.width + (x - origin.x)) * 4, as: SIMD4<UInt8>.self)) / 255
                        let at = (y * baseWidth + x) * 4
                        let d = PixelMath.floats(dst.loadUnaligned(fromByteOffset: at, as: SIMD4<UInt8>.self)) / 255
                        let alpha = s.w * opacity
                        guard alpha > 0 else { continue }
                        let outAlpha = alpha + d.w * (1 - alpha)
                        var colour = (s * alpha + d * d.w * (1 - alpha)) / max(outAlpha, 1e-6)
                        colour.w = outAlpha
                        dst.storeBytes(of: PixelMath.quantize(colour), toByteOffset: at, as: SIMD4<UInt8>.self)
                    }
                }
            }
        }
    }
}
