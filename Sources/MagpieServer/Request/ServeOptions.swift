/// What a request asks to be done to the image and how to write it, from its option segments
/// (``parse(_:fileExtension:presets:maximumOptions:registry:)``).
public struct ServeOptions: Sendable, Equatable {
    /// Whether pixels keep their colour profile or are converted to sRGB.
    public enum ColorHandling: String, Sendable, Equatable, CaseIterable {
        /// Decode as stored, keeping the profile (`color:keep`, the default).
        case keep
        /// Decode converted to sRGB (`color:srgb`): ``ImageDecodingOptions/ColorSpace/sRGB``.
        case srgb
    }

    /// The processors from the option segments, in URL order; ``DefaultImageProcessor/default`` when there are none.
    public var processor: any ImageProcessor
    /// From `format:` or the extension; ``RequestedFormat/auto`` when neither is given.
    public var format: RequestedFormat
    /// From `quality:`, 1...100; nil for the encoders' default (``ImageEncodingOptions/default``, 85).
    public var quality: Int?
    /// From `metadata:`; ``ImageEncodingOptions/MetadataPolicy/none`` by default.
    public var metadata: ImageEncodingOptions.MetadataPolicy
    /// From `color:keep` or `color:srgb`; ``ColorHandling/keep`` by default.
    public var color: ColorHandling
    /// True for `frames:first`: write a still image even when the source is animated.
    public var firstFrameOnly: Bool

    /// Options with the given values; the defaults are those of a URL without output options or processors.
    ///
    /// - Parameters:
    ///   - processor: The processors to run.
    ///   - format: The requested output format.
    ///   - quality: Lossy quality 1...100, or nil for the default.
    ///   - metadata: What the encoder writes besides pixels.
    ///   - color: Whether to convert to sRGB.
    ///   - firstFrameOnly: Whether to drop all frames but the first.
    public init(
        processor: any ImageProcessor = DefaultImageProcessor.default, format: RequestedFormat = .auto,
        quality: Int? = nil, metadata: ImageEncodingOptions.MetadataPolicy = .none, color: ColorHandling = .keep,
        firstFrameOnly: Bool = false
    ) {
        self.processor = processor
        self.format = format
        self.quality = quality
        self.metadata = metadata
        self.color = color
        self.firstFrameOnly = firstFrameOnly
    }

    /// Every field equal, the processors compared by ``ImageProcessor/identifier``.
    public static func == (lhs: ServeOptions, rhs: ServeOptions) -> Bool {
        lhs.processor.identifier == rhs.processor.identifier && lhs.format == rhs.format && lhs.quality == rhs.quality
            && lhs.metadata == rhs.metadata && lhs.color == rhs.color && lhs.firstFrameOnly == rhs.firstFrameOnly
    }

    /// A canonical text of everything that decides the output except the format ``RequestedFormat/auto`` picks
    /// (the server adds the negotiated format to its cache key itself).
    ///
    /// The output options come first in a fixed order with defaults spelled out, then the processors' canonical
    /// identifier (`|`-separated, in URL order, since order changes pixels):
    /// `format:auto/quality:85/metadata:none/color:keep/frames:all/resize:256x256:fit|round:12`. So option order,
    /// presets, aliases (`jpg`, `bw`) and defaults written out or left out do not change it; anything that changes
    /// the output does.
    public var normalized: String {
        let outputs = [
            "format:\(format.name)",
            "quality:\(quality ?? ImageEncodingOptions.default.quality)",
            "metadata:\(metadata.rawValue)",
            "color:\(color.rawValue)",
            "frames:\(firstFrameOnly ? "first" : "all")",
        ]
        let processors = processor.identifier
        return (outputs + (processors.isEmpty ? [] : [processors])).joined(separator: "/")
    }

    /// The negotiated output format for this request, with `frames:first` applied: an animated source then counts as
    /// a still, and the result always has ``OutputFormatChoice/firstFrameOnly`` set.
    ///
    /// - Parameters:
    ///   - accept: The request's `Accept` header, nil when absent.
    ///   - source: The decoded source's format.
    ///   - hasAlpha: Whether the (processed) image has translucent pixels.
    ///   - isAnimated: Whether the (processed) image has more than one frame.
    public func outputFormat(accept: String?, source: ImageFormat, hasAlpha: Bool, isAnimated: Bool) -> OutputFormatChoice {
        var choice = OutputFormatChoice.negotiate(
            format, accept: accept, source: source, hasAlpha: hasAlpha, isAnimated: isAnimated && !firstFrameOnly)
        choice.firstFrameOnly = choice.firstFrameOnly || firstFrameOnly
        return choice
    }

    /// The encoder settings for `choice`: ``quality`` (85 when not given), ``metadata`` and first-frame-only; the
    /// other fields keep ``ImageEncodingOptions/default``'s values.
    ///
    /// - Parameter choice: The negotiated format (from ``outputFormat(accept:source:hasAlpha:isAnimated:)``).
    public func encodingOptions(for choice: OutputFormatChoice) -> ImageEncodingOptions {
        var options = ImageEncodingOptions(
            quality: quality ?? ImageEncodingOptions.default.quality, onlyFirstFrame: firstFrameOnly || choice.firstFrameOnly)
        options.metadata = metadata
        return options
    }

    /// The output options' names, in the order error messages list them.
    static let outputOptionNames = ["format", "quality", "metadata", "color", "preset", "frames"]

    /// Every option name a segment may start with: the processors' (``ImageProcessorSpec/processorNames``), then the
    /// output options' (`color` is both: `color:keep` and `color:srgb` are the output option, any other `color:` the
    /// colour-controls processor).
    static let knownNames: [String] = {
        let processors = ImageProcessorSpec.processorNames
        return processors + outputOptionNames.filter { !processors.contains($0) }
    }()
}
