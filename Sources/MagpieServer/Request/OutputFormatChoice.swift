/// The format a response is written in, and what the choice implies for frames and caching.
public struct OutputFormatChoice: Sendable, Equatable {
    /// The format to encode.
    public var format: ImageFormat
    /// True when an animated image must be written as its first frame, because ``format`` cannot hold animation.
    public var firstFrameOnly: Bool
    /// True when another `Accept` header could have given another format: the response needs `Vary: Accept`.
    public var variesOnAccept: Bool

    /// A choice with the given values.
    ///
    /// - Parameters:
    ///   - format: The format to encode.
    ///   - firstFrameOnly: Whether only the first frame is written.
    ///   - variesOnAccept: Whether the response needs `Vary: Accept`.
    public init(format: ImageFormat, firstFrameOnly: Bool, variesOnAccept: Bool) {
        self.format = format
        self.firstFrameOnly = firstFrameOnly
        self.variesOnAccept = variesOnAccept
    }

    /// Formats whose built-in encoder writes every frame of an animation (APNG for PNG, image sequences for AVIF).
    static let animatedFormats: Set<ImageFormat> = [.gif, .png, .webp, .avif, .jxl]

    /// Formats every browser shows, so a source in one of them may be answered in it whatever `Accept` says.
    static let universalFormats: Set<ImageFormat> = [.jpeg, .png, .gif]

    /// Picks the output format.
    ///
    /// A ``RequestedFormat/fixed(_:)`` format is used as it is. For ``RequestedFormat/auto``, in order:
    /// 1. AVIF or WebP when `Accept` names it explicitly with a weight above 0 (the higher weight wins, AVIF on a
    ///    tie); wildcards such as `image/*` or `*/*` never select them, and `q=0` refuses them.
    /// 2. The source's format when it is JPEG (without alpha: a JPEG given round corners becomes PNG), PNG or an animated
    ///    GIF (a still GIF becomes PNG: re-quantising a processed image to 256 colours loses what PNG keeps), or JPEG XL
    ///    when `Accept` names `image/jxl`.
    /// 3. Otherwise (a source the registry cannot write, or AVIF, WebP or JPEG XL the client did not ask for):
    ///    GIF for an animation, PNG for an image with alpha, JPEG otherwise.
    ///
    /// Formats the registry cannot encode are skipped. An animated image written in a format that cannot animate
    /// (JPEG) gets ``firstFrameOnly``.
    ///
    /// - Parameters:
    ///   - requested: What the URL asked for.
    ///   - accept: The request's `Accept` header; nil when absent (then neither AVIF nor WebP is chosen).
    ///   - source: The format of the source image.
    ///   - hasAlpha: Whether the image to write has translucent pixels.
    ///   - isAnimated: Whether the image to write has several frames (false after `frames:first`).
    ///   - registry: The coders, asked which formats can be written.
    public static func negotiate(
        _ requested: RequestedFormat, accept: String?, source: ImageFormat, hasAlpha: Bool, isAnimated: Bool,
        registry: ImageCoderRegistry = .shared
    ) -> OutputFormatChoice {
        func choice(_ format: ImageFormat, varies: Bool) -> OutputFormatChoice {
            OutputFormatChoice(
                format: format, firstFrameOnly: isAnimated && !animatedFormats.contains(format), variesOnAccept: varies)
        }
        if case .fixed(let format) = requested { return choice(format, varies: false) }
        let header = AcceptHeader(accept)
        // The formats whose use depends on Accept for this source; Vary is needed when any of them could be chosen.
        let gated = [ImageFormat.avif, .webp] + (source == .jxl ? [.jxl] : [])
        let varies = gated.contains(where: registry.canEncode)
        func weight(_ format: ImageFormat) -> Double {
            registry.canEncode(format) ? header.explicitQuality(of: format.mimeType) ?? 0 : 0
        }
        let modern: ImageFormat = weight(.webp) > weight(.avif) ? .webp : .avif
        if weight(modern) > 0 { return choice(modern, varies: varies) }
        // JPEG has no alpha: an image that gained transparency (round corners) would come out on white.
        if universalFormats.contains(source), registry.canEncode(source), source != .gif || isAnimated,
            !(hasAlpha && source == .jpeg)
        {
            return choice(source, varies: varies)
        }
        if source == .jxl, weight(.jxl) > 0 { return choice(.jxl, varies: varies) }
        let fallbacks: [ImageFormat] = isAnimated ? [.gif, .png] : (hasAlpha || source == .gif) ? [.png] : [.jpeg, .png]
        return choice(fallbacks.first(where: registry.canEncode) ?? fallbacks[0], varies: varies)
    }
}
