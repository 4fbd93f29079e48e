/// How the image's colour combines with the backdrop's where both are present: the separable
/// blend modes of the W3C Compositing and Blending spec. `B(Cb, Cs)` below is the result for
/// backdrop colour Cb and image colour Cs, channels in 0...1.
public enum BlendMode: String, Sendable, CaseIterable {
    /// Cs: the image covers the backdrop (plain alpha compositing).
    case normal
    /// Cb × Cs: darkens.
    case multiply
    /// Cb + Cs − Cb × Cs: lightens.
    case screen
    /// Hard light with the layers swapped: contrast from the backdrop.
    case overlay
    /// min(Cb, Cs).
    case darken
    /// max(Cb, Cs).
    case lighten
    /// Brightens the backdrop to reflect the image: Cb / (1 − Cs), capped at 1.
    case colorDodge
    /// Darkens the backdrop to reflect the image: 1 − (1 − Cb) / Cs, floored at 0.
    case colorBurn
    /// Soft contrast: darkens or lightens the backdrop depending on the image.
    case softLight
    /// Multiply for dark image colours, screen for light ones.
    case hardLight
    /// |Cb − Cs|.
    case difference
    /// Cb + Cs − 2 × Cb × Cs: difference with less contrast.
    case exclusion

    /// The name in processor text: the case name in lowercase (`colordodge`).
    var specName: String { rawValue.lowercased() }

    /// The mode whose text name is `name`, case-insensitively.
    init?(specName name: String) {
        guard let mode = Self.allCases.first(where: { $0.specName == name.lowercased() }) else { return nil }
        self = mode
    }
}

/// Composites the image, at opacity `alpha`, over `backgroundColor` with `blendMode`
/// (W3C source-over compositing with the separable blend modes). Without a background the
/// backdrop is transparent, so the mode has nothing to blend with and only `alpha` applies.
/// Text form: `blend:MODE[:ALPHA][:bg=RRGGBBAA]`.
public struct BlendImageProcessor: ImageProcessor {
    /// How image and background colours combine.
    public let blendMode: BlendMode
    /// The image's opacity, 0...1.
    public let alpha: Double
    /// The backdrop; nil is transparent.
    public let backgroundColor: RGBAColor?

    /// A processor compositing the image at opacity `alpha` over `backgroundColor` with `blendMode`.
    ///
    /// Parameters are checked when processing, not here.
    /// - Parameters:
    ///   - blendMode: How image and background colours combine.
    ///   - alpha: The image's opacity, 0...1 (default 1).
    ///   - backgroundColor: The backdrop; nil (the default) for transparent, where only `alpha` has an effect.
    public init(blendMode: BlendMode, alpha: Double = 1, backgroundColor: RGBAColor? = nil) {
        self.blendMode = blendMode
        self.alpha = alpha
        self.backgroundColor = backgroundColor
    }

    /// The text form, `blend:MODE:ALPHA`, plus `:bg=rrggbbaa` with a background, for example
    /// `blend:multiply:1:bg=ffffffff`; ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String {
        "blend:\(blendMode.specName):\(DecimalText.format(alpha))" + (backgroundColor.map { ":bg=\($0.hex)" } ?? "")
    }

    /// The composited image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   when `alpha` is outside 0...1; ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard (0...1).contains(alpha) else {
            throw MagpieError.processingFailed(
                reason: .invalidParameter(processor: identifier, message: "alpha must be within 0...1"))
        }
        let opacity = Float(alpha), mode = blendMode
        let backdrop = backgroundColor.map(PixelMath.unit) ?? .zero
        return try processImage(item, context: context) { image in
            try image.mapFrames { pixels in
                // Nothing to blend with: source-over onto transparency is the image at `opacity`.
                backdrop.w == 0
                    ? try PixelMath.map(pixels, ColourMix(added: .zero, kept: 1, alphaScale: opacity))
                    : try PixelMath.map(pixels, Composite(mode: mode, opacity: opacity, backdrop: backdrop))
            }
        }
    }

    /// Straight-alpha pixel (alpha times `opacity`) over the straight-alpha `backdrop`, W3C
    /// source-over with the blend: co = cs(1 − αb) + cb(1 − αs) + αs·αb·B(Cb, Cs) premultiplied.
    private struct Composite: PixelTransform {
        let mode: BlendMode
        let opacity: Float
        let backdrop: SIMD4<Float>

        @inline(__always)
        func callAsFunction(_ pixel: SIMD4<Float>) -> SIMD4<Float> {
            let alphaS = pixel.w * opacity, alphaB = backdrop.w
            let alphaO = alphaS + alphaB * (1 - alphaS)
            guard alphaO > 0 else { return .zero }
            let mixed = BlendImageProcessor.blend(mode, backdrop, pixel)
            var colour = pixel * (alphaS * (1 - alphaB)) + backdrop * (alphaB * (1 - alphaS)) + mixed * (alphaS * alphaB)
            colour /= alphaO
            colour.w = alphaO
            return colour
        }
    }

    /// B(Cb, Cs) for `mode`. A switch per pixel costs a well-predicted branch.
    @inline(__always)
    static func blend(_ mode: BlendMode, _ b: SIMD4<Float>, _ s: SIMD4<Float>) -> SIMD4<Float> {
        switch mode {
        case .normal: s
        case .multiply: b * s
        case .screen: screen(b, s)
        case .overlay: hardLight(s, b)
        case .darken: PixelMath.minimum(b, s)
        case .lighten: PixelMath.maximum(b, s)
        case .colorDodge: colorDodge(b, s)
        case .colorBurn: colorBurn(b, s)
        case .softLight: softLight(b, s)
        case .hardLight: hardLight(b, s)
        case .difference: PixelMath.maximum(b - s, s - b)
        case .exclusion: b + s - 2 * b * s
        }
    }

    // The W3C formulas, per channel (lanes are independent; the alpha lane is discarded).

    @inline(__always)
    static func screen(_ b: SIMD4<Float>, _ s: SIMD4<Float>) -> SIMD4<Float> { b + s - b * s }

    @inline(__always)
    static func hardLight(_ b: SIMD4<Float>, _ s: SIMD4<Float>) -> SIMD4<Float> {
        let dark = b * (2 * s), light = screen(b, 2 * s - 1)
        return light.replacing(with: dark, where: s .<= 0.5)
    }

    @inline(__always)
    static func colorDodge(_ b: SIMD4<Float>, _ s: SIMD4<Float>) -> SIMD4<Float> {
        let one = SIMD4<Float>(repeating: 1)
        let dodged = PixelMath.minimum(one, b / PixelMath.maximum(one - s, .init(repeating: .leastNormalMagnitude)))
        return dodged.replacing(with: 1, where: s .>= 1).replacing(with: 0, where: b .<= 0)
    }

    @inline(__always)
    static func colorBurn(_ b: SIMD4<Float>, _ s: SIMD4<Float>) -> SIMD4<Float> {
        let one = SIMD4<Float>(repeating: 1)
        let burnt = one - PixelMath.minimum(one, (one - b) / PixelMath.maximum(s, .init(repeating: .leastNormalMagnitude)))
        return burnt.replacing(with: 0, where: s .<= 0).replacing(with: 1, where: b .>= 1)
    }

    @inline(__always)
    static func softLight(_ b: SIMD4<Float>, _ s: SIMD4<Float>) -> SIMD4<Float> {
        let d = (((16 * b - 12) * b + 4) * b).replacing(with: b.squareRoot(), where: b .> 0.25)
        let dark = b - (1 - 2 * s) * b * (1 - b)
        let light = b + (2 * s - 1) * (d - b)
        return light.replacing(with: dark, where: s .<= 0.5)
    }
}
