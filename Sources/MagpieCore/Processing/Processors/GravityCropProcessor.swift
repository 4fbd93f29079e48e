/// Cuts a rectangle of ``size`` out of images, placed by a ``Gravity``: a compass anchor with offsets, a focus point,
/// or the most interesting part (``Gravity/Kind/smart``: ``SmartCropping``, through the ``detector`` when there is one).
/// A size larger than the image is clamped to it. Text form: `gcrop:WxH:GRAVITY`.
public struct GravityCropProcessor: ImageProcessor {
    /// The rectangle kept, in pixels.
    public let size: PixelSize
    /// Where it sits.
    public let gravity: Gravity
    /// What the gravity's pixel offsets are multiplied by (a device-pixel ratio; default 1).
    public let offsetScale: Double
    /// What a smart gravity asks for faces or objects first; nil for attention alone.
    public let detector: (any FocalPointDetecting)?

    /// A processor keeping `size` pixels where `gravity` says.
    public init(size: PixelSize, gravity: Gravity, offsetScale: Double = 1, detector: (any FocalPointDetecting)? = nil) {
        self.size = size
        self.gravity = gravity
        self.offsetScale = offsetScale
        self.detector = detector
    }

    /// `gcrop:WxH:GRAVITY`, then `:dpr=` and the detector's identifier when they matter.
    public var identifier: String {
        var text = "gcrop:\(size):\(gravity.specText)"
        if offsetScale != 1 { text += ":dpr=\(DecimalText.format(offsetScale))" }
        if gravity.kind == .smart, let detector { text += ":detector=\(detector.identifier)" }
        return text
    }

    /// The cropped image, every frame alike (a smart gravity looks at the first frame).
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard size.width > 0, size.height > 0 else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "size must be positive"))
        }
        return try processImage(item, context: context) { image in
            let kept = PixelSize(width: min(size.width, image.width), height: min(size.height, image.height))
            if kept == image.pixelSize { return image }
            let placed = gravity.kind == .smart
                ? SmartCropping.gravity(in: image.pixels, crop: kept, detector: detector) : gravity
            let origin = placed.placement(outer: image.pixelSize, inner: kept, offsetScale: offsetScale)
            return try image.mapFrames {
                try CroppingImageProcessor.crop($0, x: origin.x, y: origin.y, width: kept.width, height: kept.height)
            }
        }
    }
}
