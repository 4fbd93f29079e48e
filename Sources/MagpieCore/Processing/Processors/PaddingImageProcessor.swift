/// Space around a box, CSS's order: top, right, bottom, left.
public struct EdgeInsets: Sendable, Hashable {
    /// Pixels above.
    public var top: Int
    /// Pixels on the right.
    public var right: Int
    /// Pixels below.
    public var bottom: Int
    /// Pixels on the left.
    public var left: Int

    /// Insets with the given sides.
    public init(top: Int, right: Int, bottom: Int, left: Int) {
        self.top = top
        self.right = right
        self.bottom = bottom
        self.left = left
    }

    /// No space.
    public static let zero = EdgeInsets(top: 0, right: 0, bottom: 0, left: 0)

    /// Whether every side is 0.
    public var isZero: Bool { self == .zero }
}

/// Adds space around images (imgproxy's `padding`): the image grows by the insets, and the new area is ``background``
/// (transparent by default). Text form: `pad:TOP:RIGHT:BOTTOM:LEFT[:bg=RRGGBBAA]`.
public struct PaddingImageProcessor: ImageProcessor {
    /// The space added on each side, in pixels.
    public let insets: EdgeInsets
    /// What fills it.
    public let background: RGBAColor

    /// A processor adding `insets` of `background` (default transparent).
    public init(insets: EdgeInsets, background: RGBAColor = .clear) {
        self.insets = insets
        self.background = background
    }

    /// `pad:TOP:RIGHT:BOTTOM:LEFT`, with `:bg=` when not transparent.
    public var identifier: String {
        "pad:\(insets.top):\(insets.right):\(insets.bottom):\(insets.left)" + (background == .clear ? "" : ":bg=\(background.hex)")
    }

    /// The padded image, every frame alike.
    ///
    /// - Throws: ``MagpieError/processingFailed(reason:)`` for a negative inset or a result past the limits.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard insets.top >= 0, insets.right >= 0, insets.bottom >= 0, insets.left >= 0 else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "insets must not be negative"))
        }
        return try processImage(item, context: context) { image in
            if insets.isZero { return image }
            let size = PixelSize(
                width: image.width.saturatingAdd(insets.left).saturatingAdd(insets.right),
                height: image.height.saturatingAdd(insets.top).saturatingAdd(insets.bottom))
            try checkOutput(size, frameCount: image.frames.count, context: context)
            return try image.mapFrames { try Canvas.placing($0, on: size, at: (insets.left, insets.top), fill: background) }
        }
    }
}
