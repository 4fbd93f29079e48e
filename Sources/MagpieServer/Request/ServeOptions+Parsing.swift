import Magpie

extension ServeOptions {
    /// The options of a URL's option segments.
    ///
    /// Each segment is one of:
    /// - one of Magpie's processors in ``ImageProcessorSpec``'s grammar (`resize:256x256:fit`, `round:12`, `gray:`),
    ///   run in URL order;
    /// - one of imgproxy's processing options, by its long or short name (`rs:fill:300:200`, `g:sm`, `w:300`), which
    ///   update one state (``ImgproxyOptions``; later ones override earlier ones, empty arguments keep what was set)
    ///   run as imgproxy's pipeline before Magpie's processors, whatever the order they came in;
    /// - an output option: `format:` (also `f:`, `ext:`), `quality:` (`q:`; 0 is the default), `metadata:`,
    ///   `color:keep|srgb`, `frames:first|all`, `preset:NAME[:NAME…]` (`pr:`), and imgproxy's `format_quality`,
    ///   `max_bytes`, `strip_metadata`, `keep_copyright`, `strip_color_profile`, `page`, `pages`,
    ///   `disable_animation`, `auto_rotate`, `skip_processing`, `cachebuster`, `expires`, `filename`,
    ///   `return_attachment`.
    ///
    /// Names both grammars use: the arguments decide for `resize` and `crop` (`WxH` is Magpie's) and `flip` (`h`,
    /// `v`, `hv` are Magpie's); `rotate` and `blur`, which read alike, are imgproxy's in a URL with another imgproxy
    /// processing option and Magpie's otherwise. A preset named `default`, when configured, applies first to every URL
    /// (imgproxy's rule). Names are case-insensitive; one trailing `:` is dropped; a `|` in a segment is refused; an
    /// output option given twice takes the last value (imgproxy's rule, so a URL can override what a preset sets); a
    /// preset may not name another preset.
    ///
    /// - Parameters:
    ///   - segments: The option segments, percent-decoded (``ServePath/optionSegments``).
    ///   - fileExtension: The URL's extension (``ServePath/fileExtension``); it sets the format like `format:`, and
    ///     the two must agree when both are given.
    ///   - presets: Named lists of option segments from the server's configuration.
    ///   - maximumOptions: Most segments once presets are expanded.
    ///   - registry: The coders, asked which formats can be written.
    /// - Throws: A 400 ``ServeRequestError`` naming the first bad segment, preset or extension, or saying there are
    ///   more than `maximumOptions` segments.
    public static func parse(
        _ segments: [String], fileExtension: String?, presets: [String: [String]], maximumOptions: Int = .max,
        registry: ImageCoderRegistry = .shared
    ) throws(ServeRequestError) -> ServeOptions {
        var options = ServeOptions()
        var format: RequestedFormat?
        let given = presets["default"] != nil ? ["preset:default"] + segments : segments
        let expanded = try expand(given, presets: presets)
        guard expanded.count <= maximumOptions else {
            throw .badRequest("the options come to \(expanded.count) with their presets expanded; at most \(maximumOptions) are allowed")
        }
        var classified: [Segment] = []
        for (segment, preset) in expanded {
            classified.append(try Segment(segment, origin: preset.map { " (from preset \(ServeRequestError.quoted($0)))" } ?? ""))
        }
        let imgproxyURL = classified.contains { $0.kind == .imgproxy }
        for segment in classified {
            try options.apply(segment, imgproxyURL: imgproxyURL, format: &format, registry: registry)
        }
        if let fileExtension {
            let quoted = ServeRequestError.quoted(fileExtension)
            guard let named = ImageFormat(fileExtension: fileExtension) else {
                throw .badRequest("extension \(quoted) names no image format")
            }
            guard registry.canEncode(named) else {
                throw .badRequest("extension \(quoted) names a format the server cannot write (\(writable(registry, auto: false)))")
            }
            if let format, format != .fixed(named) {
                throw .badRequest("extension \(quoted) and format:\(format.name) disagree")
            }
            format = .fixed(named)
        }
        options.format = format ?? .auto
        return options
    }

    /// Checks every preset of a configuration, so a bad one fails at startup rather than on requests.
    ///
    /// - Parameters:
    ///   - presets: Named lists of option segments.
    ///   - registry: The coders, asked which formats can be written.
    /// - Throws: A 400-status ``ServeRequestError`` naming the preset and its bad segment, or a name that is empty or
    ///   contains `:`, `/` or `|`.
    public static func validate(presets: [String: [String]], registry: ImageCoderRegistry = .shared) throws(ServeRequestError) {
        for name in presets.keys.sorted() {
            guard !name.isEmpty, !name.contains(where: { ":/|".contains($0) }) else {
                throw .badRequest("preset name \(ServeRequestError.quoted(name)) is empty or contains \":\", \"/\" or \"|\"")
            }
            _ = try parse(["preset:" + name], fileExtension: nil, presets: presets, registry: registry)
        }
    }

    /// The segments with `preset:` ones replaced by the presets' segments, each with the preset it came from.
    private static func expand(
        _ segments: [String], presets: [String: [String]]
    ) throws(ServeRequestError) -> [(segment: String, preset: String?)] {
        var result: [(segment: String, preset: String?)] = []
        for segment in segments {
            guard let names = presetNames(segment) else {
                result.append((segment, nil))
                continue
            }
            guard !names.isEmpty, !names.contains("") else {
                throw .badRequest("option \(ServeRequestError.quoted(segment)) names no preset")
            }
            for name in names {
                guard let expansion = presets[name] else {
                    let known = presets.keys.sorted().joined(separator: ", ")
                    throw .badRequest("unknown preset \(ServeRequestError.quoted(name)) (known: \(known.isEmpty ? "none" : known))")
                }
                // Nesting is refused rather than resolved: one level cannot loop, and a preset reads as what it says.
                if let inner = expansion.first(where: { presetNames($0) != nil }) {
                    throw .badRequest(
                        "preset \(ServeRequestError.quoted(name)) contains \(ServeRequestError.quoted(inner)); presets cannot name presets")
                }
                result += expansion.map { ($0, name) }
            }
        }
        return result
    }

    /// The names in a `preset:a:b` segment; nil when the segment is another option.
    private static func presetNames(_ segment: String) -> [String]? {
        let fields = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count > 1, ["preset", "pr"].contains(fields[0].lowercased()) else { return nil }
        var names = fields.dropFirst().map(String.init)
        if names.count > 1, names.last == "" { names.removeLast() }  // the optional trailing colon
        return names
    }

    /// `writable: jpeg, png, …` for messages, with `auto` when `auto` is true.
    static func writable(_ registry: ImageCoderRegistry, auto: Bool) -> String {
        "writable: " + (registry.encodableFormats.map(\.rawValue) + (auto ? ["auto"] : [])).joined(separator: ", ")
    }
}
