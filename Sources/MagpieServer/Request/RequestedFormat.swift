/// The output format a URL asks for, before negotiation (``OutputFormatChoice/negotiate(_:accept:source:hasAlpha:isAnimated:registry:)``).
public enum RequestedFormat: Sendable, Equatable, Hashable {
    /// Chosen per request from the `Accept` header and the source (`format:auto`, or no format and no extension).
    case auto
    /// This format, from `format:` or the extension; always one the registry can encode.
    case fixed(ImageFormat)

    /// `auto` or the format's raw value (`jpeg`, `png`, `webp`, …), as ``ServeOptions/normalized`` writes it.
    public var name: String {
        switch self {
        case .auto: "auto"
        case .fixed(let format): format.rawValue
        }
    }
}
