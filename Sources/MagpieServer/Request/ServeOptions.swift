import Magpie

/// What a request asks to be done to the image and how to write it, from its option segments
/// (``parse(_:fileExtension:presets:maximumOptions:registry:)``): Magpie's processors in URL order, imgproxy's
/// options as one pipeline that runs first (``ImgproxyProcessor``), and the output and response options both share.
public struct ServeOptions: Sendable, Equatable {
    /// Whether pixels keep their colour profile or are converted to sRGB.
    public enum ColorHandling: String, Sendable, Equatable, CaseIterable {
        /// Decode as stored, keeping the profile (`color:keep`, the default).
        case keep
        /// Decode converted to sRGB (`color:srgb`): ``ImageDecodingOptions/ColorSpace/sRGB``.
        case srgb
    }

    /// Magpie's processors from the option segments, in URL order; ``DefaultImageProcessor/default`` when there are
    /// none. They run after imgproxy's pipeline.
    public var processor: any ImageProcessor
    /// imgproxy's options (`rs:fill:300:200`, `g:sm`, …); the defaults when the URL has none.
    public var imgproxy: ImgproxyOptions
    /// A thumbor URL's geometry and filters (``ThumborProcessor``); nil for imgproxy's and Magpie's URLs.
    public var thumbor: ThumborOptions?
    /// The images of thumbor's `watermark(…)` filters by URL, fetched by the server before processing; not part of
    /// the key or of equality (the URLs in ``thumbor`` are).
    public var thumborWatermarks: [String: Image] = [:]
    /// From `format:` or the extension; ``RequestedFormat/auto`` when neither is given.
    public var format: RequestedFormat
    /// From `quality:`, 1...100; nil for the server's default for the output format.
    public var quality: Int?
    /// From imgproxy's `format_quality` (`fq:webp:70:avif:50`): quality per output format, under ``quality``.
    public var formatQuality: [ImageFormat: Int]
    /// From imgproxy's `max_bytes`: the largest result in bytes, met by lowering the quality of lossy formats; 0 for
    /// none.
    public var maxBytes: Int
    /// From `metadata:` (or imgproxy's `strip_metadata`); ``ImageEncodingOptions/MetadataPolicy/none`` by default.
    public var metadata: ImageEncodingOptions.MetadataPolicy
    /// From `color:keep` or `color:srgb` (or imgproxy's `strip_color_profile`); ``ColorHandling/keep`` by default.
    public var color: ColorHandling
    /// True for `frames:first` (or imgproxy's `disable_animation`): write a still image even when the source is
    /// animated.
    public var firstFrameOnly: Bool
    /// imgproxy's `page`: the first frame (page) used, from 0.
    public var page: Int
    /// imgproxy's `pages`: how many frames from ``page``; nil for all that follow.
    public var pages: Int?
    /// imgproxy's `auto_rotate`: apply the source's EXIF orientation (default true).
    public var autoRotate: Bool
    /// imgproxy's `skip_processing`: source formats answered with the source's own bytes when no other output format
    /// is asked for.
    public var skipProcessing: Set<ImageFormat>
    /// imgproxy's `cachebuster`: no effect on the image; a new value makes a new result (and refetches the source).
    public var cachebuster: String
    /// imgproxy's `expires`: the URL is refused with 404 after this Unix time; nil for never.
    public var expires: Int?
    /// imgproxy's `filename`: the file name (without extension) in `Content-Disposition`; nil derives it from the source.
    public var filename: String?
    /// imgproxy's `return_attachment`: `Content-Disposition: attachment` instead of `inline`.
    public var attachment: Bool
    /// imgproxy's `keep_copyright` (default true): with ``metadata`` `.none` the result still carries the source
    /// EXIF's Copyright and Artist, in an EXIF block holding nothing else.
    public var keepCopyright: Bool
    /// imgproxy's `max_src_resolution`: the most pixels per frame of the source for this URL (a security option).
    public var maxSourcePixels: Int?
    /// imgproxy's `max_src_file_size`: the largest source in bytes for this URL (a security option).
    public var maxSourceBytes: Int?
    /// imgproxy's `max_animation_frames`: the most frames of an animated source for this URL (a security option).
    public var maxSourceFrames: Int?

    /// Whether a security option (``maxSourcePixels``, ``maxSourceBytes``, ``maxSourceFrames``) is set: a server
    /// allows them only when configured to.
    public var setsSecurityOptions: Bool { maxSourcePixels != nil || maxSourceBytes != nil || maxSourceFrames != nil }

    /// Options with the given values; the defaults are those of a URL without output options or processors.
    public init(
        processor: any ImageProcessor = DefaultImageProcessor.default, format: RequestedFormat = .auto,
        quality: Int? = nil, metadata: ImageEncodingOptions.MetadataPolicy = .none, color: ColorHandling = .keep,
        firstFrameOnly: Bool = false
    ) {
        self.processor = processor
        self.imgproxy = ImgproxyOptions()
        self.thumbor = nil
        self.format = format
        self.quality = quality
        self.formatQuality = [:]
        self.maxBytes = 0
        self.metadata = metadata
        self.color = color
        self.firstFrameOnly = firstFrameOnly
        self.page = 0
        self.pages = nil
        self.autoRotate = true
        self.skipProcessing = []
        self.cachebuster = ""
        self.expires = nil
        self.filename = nil
        self.attachment = false
        self.keepCopyright = true
        self.maxSourcePixels = nil
        self.maxSourceBytes = nil
        self.maxSourceFrames = nil
    }

    /// Every field equal, the processors compared by ``ImageProcessor/identifier``.
    public static func == (lhs: ServeOptions, rhs: ServeOptions) -> Bool {
        lhs.processor.identifier == rhs.processor.identifier && lhs.normalized == rhs.normalized
            && lhs.expires == rhs.expires && lhs.filename == rhs.filename && lhs.attachment == rhs.attachment
            && lhs.keepCopyright == rhs.keepCopyright
    }

    /// A canonical text of everything that decides the output except the format ``RequestedFormat/auto`` picks
    /// (the server adds the negotiated format to its cache key itself), `watermarkName` naming the server's watermark
    /// image when imgproxy's `watermark` uses it.
    ///
    /// The output options come first in a fixed order with defaults spelled out (a fixed format's default quality
    /// written as that number, so `quality:80` and no quality share a key when 80 is the default), then imgproxy's
    /// pipeline (``ImgproxyOptions/canonicalText(watermarkName:detector:)``) and Magpie's processors' identifiers
    /// (`|`-separated, in URL order): `format:auto/quality:default/metadata:none/color:keep/frames:all/…`. So option
    /// order, presets, aliases (`jpg`, `bw`, `rs`, `resize`) and defaults written out or left out do not change it;
    /// anything that changes the output does.
    /// A smart crop's text names `detector` (read only then, so a server that never smart-crops never loads it).
    public func normalized(
        defaultQuality: (ImageFormat) -> Int = ServeOptions.defaultQuality, watermarkName: String? = nil,
        detector: (any FocalPointDetecting)? = nil
    ) -> String {
        var qualityText = quality.map(String.init) ?? "default"
        if case .fixed(let fixed) = format, quality == nil { qualityText = String(formatQuality[fixed] ?? defaultQuality(fixed)) }
        var outputs = [
            "format:\(format.name)",
            "quality:\(qualityText)",
            "metadata:\(metadata.rawValue)",
            "color:\(color.rawValue)",
            "frames:\(firstFrameOnly ? "first" : "all")",
        ]
        if case .auto = format, !formatQuality.isEmpty {
            outputs.append("fq:" + formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value)" }.joined(separator: ":"))
        }
        if maxBytes > 0 { outputs.append("mb:\(maxBytes)") }
        if page != 0 || pages != nil { outputs.append("pages:\(page):\(pages.map(String.init) ?? "all")") }
        if !keepCopyright && metadata == .none { outputs.append("kcr:0") }
        if !autoRotate { outputs.append("ar:0") }
        if !skipProcessing.isEmpty { outputs.append("skp:" + skipProcessing.map(\.rawValue).sorted().joined(separator: ":")) }
        if !cachebuster.isEmpty { outputs.append("cb:" + cachebuster) }
        if setsSecurityOptions {
            outputs.append("limits:\(maxSourcePixels.map(String.init) ?? ""):\(maxSourceBytes.map(String.init) ?? ""):"
                + (maxSourceFrames.map(String.init) ?? ""))
        }
        var processors: [String] = []
        if let thumbor { processors.append(thumbor.canonicalText + (thumbor.smart ? detector.map { ";detector:\($0.identifier)" } ?? "" : "")) }
        if !imgproxy.isDefault {
            processors.append(imgproxy.canonicalText(watermarkName: watermarkName, detector: imgproxy.usesSmartGravity ? detector?.identifier : nil))
        }
        if !processor.identifier.isEmpty { processors.append(processor.identifier) }
        return (outputs + (processors.isEmpty ? [] : [processors.joined(separator: "|")])).joined(separator: "/")
    }

    /// ``normalized(defaultQuality:watermarkName:)`` with the server's default qualities and no watermark.
    public var normalized: String { normalized() }

    /// The processor a request runs: imgproxy's pipeline (when any of its options is set) then Magpie's processors.
    ///
    /// - Parameters:
    ///   - watermark: The server's watermark image and its name, for imgproxy's `watermark`.
    ///   - detector: What finds faces or objects for smart gravity.
    public func pipeline(watermark: (image: Image, name: String)? = nil, detector: (any FocalPointDetecting)? = nil) -> any ImageProcessor {
        if let thumbor { return ThumborProcessor(options: thumbor, detector: detector, watermarks: thumborWatermarks) |> processor }
        guard !imgproxy.isDefault else { return processor }
        return ImgproxyProcessor(options: imgproxy, watermark: watermark, detector: detector) |> processor
    }

    /// What is done to the source before a smart crop looks at it, beside the source's key in ``SourceBoundDetector``:
    /// thumbor's manual crop and trim (so every size of one photo shares the detector's answer); imgproxy's whole
    /// pipeline text, since its crop, trim and rotation come first (each URL then detects once).
    public var detectionContext: String {
        if let thumbor {
            let box = thumbor.crop.map { "\($0.left),\($0.top),\($0.right),\($0.bottom)" } ?? ""
            let trim = thumbor.trimReference.map { "\($0):\(thumbor.trimTolerance)" } ?? ""
            return "thumbor;crop:\(box);trim:\(trim);ar:\(autoRotate);page:\(page)"
        }
        return normalized
    }

    /// The size a decoder may shrink the source to while decoding without changing the result: what the request's
    /// processor says (``ImageProcessor/decodingTarget``: imgproxy's or thumbor's pipeline when it runs, else the first
    /// of Magpie's processors when it is a resize).
    public var decodingTarget: (size: PixelSize, mode: ImageDecodingOptions.ContentMode)? {
        pipeline().decodingTarget
    }

    /// The quality a format is written at when neither the URL nor the server sets one: its coder's
    /// ``FormatTraits/defaultQuality`` (imgproxy's values: JPEG 80, WebP 79, AVIF 63, JPEG XL 77), else 80
    /// (`IMGPROXY_QUALITY`'s default), which a format without a quality ignores. The result key and the encoder both
    /// read it, so a URL that writes the default out and one that leaves it out share a key and their bytes.
    public static func defaultQuality(_ format: ImageFormat) -> Int {
        format.traits.defaultQuality ?? 80
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
        // imgproxy and thumbor keep a JPEG source JPEG whatever their pipelines added (padding, a transparent fill),
        // flattened onto the background: their URLs get that; Magpie's own processors (round corners) move to PNG.
        let keepsJPEG = (!imgproxy.isDefault || thumbor != nil) && processor.identifier.isEmpty && source == .jpeg
        let translucent = hasAlpha && !keepsJPEG
        var choice = OutputFormatChoice.negotiate(
            format, accept: accept, source: source, hasAlpha: translucent, isAnimated: isAnimated && !firstFrameOnly)
        // thumbor's autojpg() (AUTO_PNG_TO_JPG): a PNG source whose result has no transparency is written as JPEG.
        if let thumbor, thumbor.autoJPG, case .auto = format, source == .png, choice.format == .png, !hasAlpha,
            !isAnimated || firstFrameOnly
        {
            choice.format = .jpeg
        }
        choice.firstFrameOnly = choice.firstFrameOnly || firstFrameOnly
        return choice
    }

    /// The quality for `format`: ``quality``, else ``formatQuality``'s, else `defaultQuality`'s.
    public func quality(for format: ImageFormat, defaultQuality: (ImageFormat) -> Int = ServeOptions.defaultQuality) -> Int {
        quality ?? formatQuality[format] ?? defaultQuality(format)
    }

    /// The encoder settings for `choice`: the quality (``quality(for:defaultQuality:)``), ``metadata``,
    /// ``keepCopyright``, imgproxy's background under a format without alpha, and first-frame-only; the other fields
    /// keep ``ImageEncodingOptions/default``'s values.
    ///
    /// - Parameter choice: The negotiated format (from ``outputFormat(accept:source:hasAlpha:isAnimated:)``).
    public func encodingOptions(for choice: OutputFormatChoice, defaultQuality: (ImageFormat) -> Int = ServeOptions.defaultQuality)
        -> ImageEncodingOptions
    {
        var options = ImageEncodingOptions(
            quality: quality(for: choice.format, defaultQuality: defaultQuality),
            onlyFirstFrame: firstFrameOnly || choice.firstFrameOnly)
        options.metadata = metadata
        options.keepsCopyright = keepCopyright
        // A format without alpha flattens onto imgproxy's background (at full opacity), not onto white.
        if var background = imgproxy.background {
            background.alpha = 255
            options.background = background
        }
        return options
    }

    /// The output options' names, in the order error messages list them.
    static let outputOptionNames = ["format", "quality", "metadata", "color", "preset", "frames"]

    /// The known names for error messages: Magpie's, then imgproxy's long names.
    static let knownNamesText: String = {
        let processors = ImageProcessorSpec.processorNames
        let magpie = processors + outputOptionNames.filter { !processors.contains($0) }
        let imgproxy = Set(ImgproxyOptions.names.values).union(imgproxyOutputNames.values).subtracting(magpie).sorted()
        return "Magpie's: \(magpie.joined(separator: ", ")); imgproxy's: \(imgproxy.joined(separator: ", ")), and their short names"
    }()

    /// Every option name a segment may start with: Magpie's processors' (``ImageProcessorSpec/processorNames``), the
    /// output options', then imgproxy's (``ImgproxyOptions/names`` and its output and response options).
    static let knownNames: [String] = {
        let processors = ImageProcessorSpec.processorNames
        let magpie = processors + outputOptionNames.filter { !processors.contains($0) }
        let imgproxy = (Array(ImgproxyOptions.names.keys) + imgproxyOutputNames.keys).sorted()
        return magpie + imgproxy.filter { !magpie.contains($0) }
    }()
}
