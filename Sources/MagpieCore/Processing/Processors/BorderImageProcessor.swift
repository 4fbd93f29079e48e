/// How a border looks.
public struct Border: Sendable, Hashable {
    /// The line colour.
    public var color: RGBAColor
    /// The line width in pixels, drawn inside the image bounds.
    public var lineWidth: Double
    /// The corner radius the border follows; the image is clipped to it.
    public var radius: CornerRadius
    /// The corners that are rounded.
    public var roundingCorners: RectCorner

    /// A border description.
    ///
    /// - Parameters:
    ///   - color: The line colour (default opaque black).
    ///   - lineWidth: The line width in pixels (default 4); must not be negative.
    ///   - radius: The corner radius the border follows (default 0: square corners).
    ///   - roundingCorners: The corners that are rounded (default all).
    public init(
        color: RGBAColor = .black, lineWidth: Double = 4, radius: CornerRadius = .point(0),
        roundingCorners: RectCorner = .all
    ) {
        self.color = color
        self.lineWidth = lineWidth
        self.radius = radius
        self.roundingCorners = roundingCorners
    }
}

/// Draws a border inside the image bounds (the size does not change), anti-aliased, following
/// rounded corners; with a radius, the area outside the rounded rectangle becomes transparent.
/// Text form: `border:WIDTH:RRGGBBAA[:radius=R][:corners=tl,tr,bl,br]`.
public struct BorderImageProcessor: ImageProcessor {
    /// The border drawn.
    public let border: Border

    /// A processor drawing `border`; its values are checked when processing.
    ///
    /// - Parameter border: The line colour, width, radius and rounded corners.
    public init(border: Border) {
        self.border = border
    }

    /// The text form, `border:WIDTH:rrggbbaa`, plus `:radius=R` and `:corners=…` when they differ from the defaults;
    /// ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String {
        var text = "border:\(DecimalText.format(border.lineWidth)):\(border.color.hex)"
        if border.radius != .point(0) { text += ":radius=\(border.radius.specText)" }
        if border.roundingCorners != .all { text += ":corners=\(border.roundingCorners.specText)" }
        return text
    }

    /// The image with its border, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   for a negative line width or radius; ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard border.lineWidth.isFinite, border.lineWidth >= 0, border.radius.isValid else {
            throw MagpieError.processingFailed(
                reason: .invalidParameter(processor: identifier, message: "line width and radius must be non-negative numbers"))
        }
        return try processImage(item, context: context) { image in
            let outer = RoundedRectShape(
                width: image.width, height: image.height,
                radius: border.radius.pixels(width: image.width, height: image.height), corners: border.roundingCorners)
            let inner = outer.inset(by: border.lineWidth)
            return image.mapFrames { draw(on: $0, outer: outer, inner: inner) }
        }
    }

    private func draw(on pixels: PixelBuffer, outer: RoundedRectShape, inner: RoundedRectShape) -> PixelBuffer {
        let width = pixels.width, height = pixels.height
        // A line wider than the image covers all of it: past the longer side the band reaches no further pixel, and
        // an unclamped `border:1e30` would trap converting to Int (spec fuzzer finding).
        let band = Int(min(max(outer.maxRadius, border.lineWidth), Double(max(width, height))).rounded(.up))
        guard band > 0 else { return pixels }
        var output = pixels
        let color = PixelBlend.straight(border.color)
        output.withUnsafeMutableBytes { raw in
            let p = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            Self.forEachPixelNearEdges(width: width, height: height, band: band) { x, y in
                let kept = outer.coverage(x: x, y: y)
                let line = max(kept - inner.coverage(x: x, y: y), 0)
                guard kept < 1 || line > 0 else { return }
                let q = p + (y * width + x) * 4
                var bottom = PixelBlend.load(q), top = color
                bottom.w *= kept
                top.w *= line
                PixelBlend.store(PixelBlend.over(top, bottom), to: q)
            }
        }
        return output
    }

    /// Calls `body` once for every pixel less than `band` pixels from an edge; the interior,
    /// which the border cannot touch, is skipped.
    static func forEachPixelNearEdges(width: Int, height: Int, band: Int, _ body: (Int, Int) -> Void) {
        let rows = GeometryBands.split(length: height, band: band)
        for (y0, y1) in rows where y1 > y0 {
            for y in y0..<y1 { for x in 0..<width { body(x, y) } }
        }
        guard rows[1].0 > rows[0].1 else { return }
        for y in rows[0].1..<rows[1].0 {
            for (x0, x1) in GeometryBands.split(length: width, band: band) where x1 > x0 {
                for x in x0..<x1 { body(x, y) }
            }
        }
    }
}
