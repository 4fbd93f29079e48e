/// Places images on a larger canvas, as imgproxy's `extend` does: each side grows to the target's (a target side of 0,
/// or one smaller than the image's, keeps the image's), the image sits where its ``Gravity`` says, and the new area is
/// ``background`` (transparent by default, so a later flatten or the encoder decides its colour). Text form:
/// `extend:WxH[:GRAVITY[:X:Y]][:bg=RRGGBBAA]`.
public struct ExtendingImageProcessor: ImageProcessor {
    /// The canvas size; 0 on a side keeps the image's.
    public let size: PixelSize
    /// Where the image sits on the canvas (a ``Gravity/Kind/smart`` one is placed like the centre).
    public let gravity: Gravity
    /// What fills the new area.
    public let background: RGBAColor
    /// What pixel offsets of the gravity are multiplied by (a device-pixel ratio; default 1).
    public let offsetScale: Double

    /// A processor extending images to `size`.
    ///
    /// - Parameters:
    ///   - size: The canvas; 0 on a side keeps the image's, and a side smaller than the image's keeps the image's.
    ///   - gravity: Where the image sits (default the centre).
    ///   - background: The new area's colour (default transparent).
    ///   - offsetScale: What the gravity's pixel offsets are multiplied by (default 1).
    public init(size: PixelSize, gravity: Gravity = .center, background: RGBAColor = .clear, offsetScale: Double = 1) {
        self.size = size
        self.gravity = gravity
        self.background = background
        self.offsetScale = offsetScale
    }

    /// `extend:WxH:GRAVITY`, with `:bg=` and `:dpr=` when not their defaults.
    public var identifier: String {
        var text = "extend:\(size.width)x\(size.height):\(gravity.specText)"
        if background != .clear { text += ":bg=\(background.hex)" }
        if offsetScale != 1 { text += ":dpr=\(DecimalText.format(offsetScale))" }
        return text
    }

    /// The canvas size for an image of `image`: each side the larger of the image's and the target's.
    public func canvasSize(for image: PixelSize) -> PixelSize {
        PixelSize(width: max(image.width, size.width), height: max(image.height, size.height))
    }

    /// The extended image, every frame alike; the image itself when no side grows.
    ///
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   for a negative size, or `outputTooLarge` past the limits; ``MagpieError/decodingFailed(reason:)`` for data.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard size.width >= 0, size.height >= 0 else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "size must not be negative"))
        }
        return try processImage(item, context: context) { image in
            let canvas = canvasSize(for: image.pixelSize)
            if canvas == image.pixelSize { return image }
            try checkOutput(canvas, frameCount: image.frames.count, context: context)
            let origin = gravity.placement(outer: canvas, inner: image.pixelSize, offsetScale: offsetScale)
            return try image.mapFrames { try Canvas.placing($0, on: canvas, at: origin, fill: background) }
        }
    }
}
