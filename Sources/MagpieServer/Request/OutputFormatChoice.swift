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

    /// Picks the output format.
    ///
    /// A ``RequestedFormat/fixed(_:)`` format is used as it is. For ``RequestedFormat/auto``, in order, with what the
    /// coders declare (``FormatTraits/negotiation``):
    /// 1. A format negotiated when accepted (AVIF, WebP) that `Accept` names explicitly with a weight above 0 (the
    ///    higher weight wins, the better rank on a tie: AVIF); wildcards such as `image/*` or `*/*` never select them,
    ///    and `q=0` refuses them (``ImageCoderRegistry/acceptedFormat(_:source:)``).
    /// 2. The source's format when every browser shows it (JPEG without alpha: a JPEG given round corners becomes
    ///    PNG; PNG; an animated GIF: a still GIF becomes PNG, since re-quantising a processed image to 256 colours
    ///    loses what PNG keeps), or when it is negotiated for its own sources (JPEG XL) and `Accept` names it.
    /// 3. Otherwise (a source the registry cannot write, or one the client did not ask for):
    ///    GIF for an animation, PNG for an image with alpha, JPEG otherwise.
    ///
    /// Formats the registry cannot encode are skipped. An animated image written in a format whose encoder cannot
    /// animate (``FormatTraits/animatesOnEncode``: JPEG) gets ``firstFrameOnly``.
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
                format: format, firstFrameOnly: isAnimated && !registry.traits(for: format).animatesOnEncode, variesOnAccept: varies)
        }
        if case .fixed(let format) = requested { return choice(format, varies: false) }
        // The formats whose use depends on Accept for this source; Vary is needed when any of them could be chosen.
        let varies = !registry.negotiableFormats(for: source).isEmpty
        // A format negotiated for its own sources only (JPEG XL) is never a universal one, so taking it before the
        // source's universal format changes nothing.
        if let accepted = registry.acceptedFormat(AcceptHeader(accept), source: source) { return choice(accepted, varies: varies) }
        // JPEG has no alpha: an image that gained transparency (round corners) would come out on white.
        if registry.traits(for: source).negotiation == .universal, registry.canEncode(source), source != .gif || isAnimated,
            hasAlpha ? registry.traits(for: source).supportsAlpha : true
        {
            return choice(source, varies: varies)
        }
        let fallbacks: [ImageFormat] = isAnimated ? [.gif, .png] : (hasAlpha || source == .gif) ? [.png] : [.jpeg, .png]
        return choice(fallbacks.first(where: registry.canEncode) ?? fallbacks[0], varies: varies)
    }
}
