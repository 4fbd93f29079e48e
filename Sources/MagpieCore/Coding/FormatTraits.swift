/// What a format is, as its coder declares it (``ImageCoder/traits``): names, MIME type, extensions, what it can hold
/// and how a server may offer it. ``ImageCoderRegistry`` answers every question about a format from these, so a new
/// format is one coder, not an edit to every list that names formats.
public struct FormatTraits: Sendable, Hashable {
    /// How an image server's `format:auto` may pick a format from the request's `Accept` header.
    public enum AcceptNegotiation: Sendable, Hashable {
        /// Never picked by negotiation; written only when a URL names it.
        case never
        /// Every browser shows it: a source in this format may be answered in it whatever `Accept` says (JPEG, PNG, GIF).
        case universal
        /// Picked for any source when `Accept` names the MIME type explicitly with a weight above 0. Between such
        /// formats the higher weight wins, and on equal weights the higher `rank` (AVIF 2 over WebP 1).
        case whenAccepted(rank: Int)
        /// Picked only for a source in this same format, when `Accept` names the MIME type explicitly (JPEG XL: worth
        /// keeping, too slow to write for every photo).
        case whenAcceptedForSameFormat
    }

    /// The name for messages and listings: `JPEG`, `WebP`, `JPEG XL`.
    public var displayName: String
    /// The MIME type written in `Content-Type`: `image/jpeg`.
    public var mimeType: String
    /// The file extensions without the dot, the usual one first (`jpg`, `jpeg`, `jpe`, `jfif`); lowercase.
    public var fileExtensions: [String]
    /// Whether the format holds translucent pixels.
    public var supportsAlpha: Bool
    /// Whether the coder's encoder writes every frame of an animation (GIF, APNG, animated WebP, AVIF sequences, JPEG XL).
    public var animatesOnEncode: Bool
    /// The quality an encoder uses when none is asked for (imgproxy's defaults: JPEG 80, WebP 79, AVIF 63, JPEG XL
    /// 77); nil for a format whose encoder has no quality (PNG, GIF), so the quality never changes its bytes.
    public var defaultQuality: Int?
    /// How `Accept` negotiation treats the format.
    public var negotiation: AcceptNegotiation

    /// Traits with the given values.
    ///
    /// - Parameters:
    ///   - displayName: The name for messages.
    ///   - mimeType: The `Content-Type`.
    ///   - fileExtensions: The extensions, usual one first; stored lowercased.
    ///   - supportsAlpha: Whether it holds translucency.
    ///   - animatesOnEncode: Whether the encoder writes animations.
    ///   - defaultQuality: The encoder's default quality; nil when it has none.
    ///   - negotiation: How `Accept` negotiation treats it; ``AcceptNegotiation/never`` by default.
    public init(
        displayName: String, mimeType: String, fileExtensions: [String], supportsAlpha: Bool, animatesOnEncode: Bool = false,
        defaultQuality: Int? = nil, negotiation: AcceptNegotiation = .never
    ) {
        self.displayName = displayName
        self.mimeType = mimeType
        self.fileExtensions = fileExtensions.map { $0.lowercased() }
        self.supportsAlpha = supportsAlpha
        self.animatesOnEncode = animatesOnEncode
        self.defaultQuality = defaultQuality
        self.negotiation = negotiation
    }

    /// The usual extension: the first of ``fileExtensions``, or `bin` when there is none.
    public var fileExtension: String { fileExtensions.first ?? "bin" }

    /// Whether ``defaultQuality`` is set: the encoder's output depends on a quality.
    public var isLossy: Bool { defaultQuality != nil }

    /// What is known of a format no coder describes: its raw value as name and extension, `image/<raw value>` as type.
    ///
    /// - Parameter format: The format.
    public static func generic(_ format: ImageFormat) -> FormatTraits {
        if format == .unknown {
            return FormatTraits(displayName: "unknown", mimeType: "application/octet-stream", fileExtensions: ["bin"], supportsAlpha: false)
        }
        return FormatTraits(
            displayName: format.rawValue.uppercased(), mimeType: "image/\(format.rawValue)", fileExtensions: [format.rawValue],
            supportsAlpha: true)
    }
}
