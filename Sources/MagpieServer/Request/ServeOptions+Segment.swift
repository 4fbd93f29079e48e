import Magpie

extension ServeOptions {
    /// imgproxy's output, frame and response options (shared with Magpie where the names are the same), by every
    /// spelling, mapped to their long names.
    static let imgproxyOutputNames: [String: String] = [
        "q": "quality", "f": "format", "ext": "format", "format_quality": "format_quality", "fq": "format_quality",
        "max_bytes": "max_bytes", "mb": "max_bytes", "strip_metadata": "strip_metadata", "sm": "strip_metadata",
        "keep_copyright": "keep_copyright", "kcr": "keep_copyright", "strip_color_profile": "strip_color_profile",
        "scp": "strip_color_profile", "page": "page", "pg": "page", "pages": "pages", "pgs": "pages",
        "disable_animation": "disable_animation", "da": "disable_animation", "skip_processing": "skip_processing",
        "skp": "skip_processing", "cachebuster": "cachebuster", "cb": "cachebuster", "expires": "expires", "exp": "expires",
        "filename": "filename", "fn": "filename", "return_attachment": "return_attachment", "att": "return_attachment",
        "auto_rotate": "auto_rotate", "ar": "auto_rotate", "pr": "preset",
        "max_src_resolution": "max_src_resolution", "msr": "max_src_resolution", "max_src_file_size": "max_src_file_size",
        "msfs": "max_src_file_size", "max_animation_frames": "max_animation_frames", "maf": "max_animation_frames",
    ]

    /// One option segment taken apart: its name (lowercased) and arguments (as written), and which grammar it belongs
    /// to.
    struct Segment {
        /// Which grammar reads a segment.
        enum Kind {
            /// An output, frame or response option (either grammar's spelling).
            case output
            /// One of Magpie's processors, run in URL order after imgproxy's pipeline.
            case magpie
            /// One of imgproxy's processing options, which only imgproxy has: a URL with one is an imgproxy URL.
            case imgproxy
            /// A name both grammars give the same arguments (`rotate`, `blur`): imgproxy's in an imgproxy URL, else
            /// Magpie's.
            case shared
        }

        let text: String
        let origin: String
        let name: String
        let arguments: [String]
        let kind: Kind

        /// Classifies `text`: for names both grammars use, the arguments decide (`resize:300x200` and `crop:100x100`
        /// are Magpie's, `resize:fill:300:200` and `crop:100:100` imgproxy's; `flip:h|v|hv` Magpie's, `flip:1:0`
        /// imgproxy's).
        init(_ text: String, origin: String) throws(ServeRequestError) {
            self.text = text
            self.origin = origin
            let trimmed = text.hasSuffix(":") ? String(text.dropLast()) : text
            let quoted = ServeRequestError.quoted(text)
            guard !trimmed.isEmpty else { throw .badRequest("empty option\(origin)") }
            guard !trimmed.contains("|") else {
                throw .badRequest("option \(quoted)\(origin) contains \"|\": give one processor per segment")
            }
            let fields = trimmed.split(separator: ":", omittingEmptySubsequences: false)
            name = fields[0].lowercased()
            arguments = fields.dropFirst().map(String.init)
            let first = arguments.first?.lowercased() ?? ""
            switch name {
            case "resize", "crop":
                kind = PixelSize(parsing: first) != nil ? .magpie : .imgproxy
            case "flip":
                kind = ["h", "v", "hv"].contains(first) ? .magpie : .imgproxy
            case "rotate", "blur":
                kind = .shared
            case "color":
                kind = arguments.count == 1 && ColorHandling(rawValue: first) != nil ? .output : .magpie
            case "format", "quality", "metadata", "frames", "preset":
                kind = .output
            case "raw":
                // imgproxy's raw streams any source past every limit and format check: not something to offer.
                throw .badRequest("option \(quoted)\(origin): raw is not supported (it would pass sources on unchecked)")
            default:
                if ImageProcessorSpec.processorNames.contains(name) {
                    kind = .magpie
                } else if imgproxyOutputNames[name] != nil {
                    kind = .output
                } else if ImgproxyOptions.names[name] != nil {
                    kind = .imgproxy
                } else {
                    throw .badRequest("unknown option \(quoted)\(origin) (\(ServeOptions.knownNamesText))")
                }
            }
        }
    }

    /// Applies one classified segment.
    ///
    /// - Parameters:
    ///   - segment: The segment.
    ///   - imgproxyURL: Whether the URL has an imgproxy-only option (then shared names are imgproxy's).
    ///   - format: The format set by `format:` so far; the extension is checked against it afterwards.
    ///   - allowsSecurityOptions: Whether imgproxy's `max_src_resolution`, `max_src_file_size` and
    ///     `max_animation_frames` may be given (as imgproxy's `IMGPROXY_ALLOW_SECURITY_OPTIONS`).
    ///   - registry: The coders, asked which formats can be written.
    mutating func apply(
        _ segment: Segment, imgproxyURL: Bool, format: inout RequestedFormat?, registry: ImageCoderRegistry
    ) throws(ServeRequestError) {
        let quoted = ServeRequestError.quoted(segment.text)
        let origin = segment.origin
        switch segment.kind {
        case .imgproxy,
            .shared where imgproxyURL:
            do {
                try imgproxy.apply(segment.name, segment.arguments, segment: segment.text)
            } catch {
                // `resize` and `crop` are also Magpie's: say both forms, the arguments fit neither.
                let both = ["resize": " (Magpie's resize:WxH[:fit|fill|none], or imgproxy's resize:TYPE:WIDTH:HEIGHT…)",
                            "crop": " (Magpie's crop:WxH[:anchor], or imgproxy's crop:WIDTH:HEIGHT[:GRAVITY])"][segment.name] ?? ""
                throw ServeRequestError(status: error.status, message: error.message + both + origin)
            }
        case .shared, .magpie:
            try appendProcessor(segment.text.hasSuffix(":") ? String(segment.text.dropLast()) : segment.text, quoted: quoted, origin: origin)
        case .output:
            try applyOutput(segment, quoted: quoted, format: &format, registry: registry)
        }
    }

    private mutating func applyOutput(
        _ segment: Segment, quoted: String, format: inout RequestedFormat?, registry: ImageCoderRegistry
    ) throws(ServeRequestError) {
        let origin = segment.origin
        let values = segment.arguments.map { $0.lowercased() }
        let option = ImgproxyArguments(name: segment.name, arguments: segment.arguments, segment: segment.text)
        func value(_ usage: String) throws(ServeRequestError) -> String {
            guard values.count == 1, !values[0].isEmpty else {
                throw .badRequest("option \(quoted)\(origin) takes one value (\(usage))")
            }
            return values[0]
        }
        func flag() throws(ServeRequestError) -> Bool {
            guard values.count == 1, let text = option.given(0) else { throw .badRequest("option \(quoted)\(origin) takes one boolean") }
            return try option.bool(text)
        }
        switch segment.name == "color" ? "color" : Self.imgproxyOutputNames[segment.name] ?? segment.name {
        case "color":
            color = ColorHandling(rawValue: values[0])!
        case "format":
            let given = try value("format:" + (registry.encodableFormats.map(\.rawValue) + ["auto"]).joined(separator: "|"))
            if given == "auto" {
                format = .auto
                break
            }
            format = .fixed(try Self.writableFormat(given, quoted: ServeRequestError.quoted(given), origin: origin, registry: registry))
        case "quality":
            let given = try value("quality:1...100")
            guard given.allSatisfy(\.isASCII), given.allSatisfy(\.isNumber), let number = Int(given), (0...100).contains(number)
            else { throw .badRequest("quality \(ServeRequestError.quoted(given))\(origin) is not a whole number in 1...100") }
            // imgproxy's 0: the default.
            quality = number == 0 ? nil : number
        case "format_quality":
            guard values.count % 2 == 0, !values.isEmpty else {
                throw .badRequest("option \(quoted)\(origin) takes format and quality pairs (fq:webp:70:avif:50)")
            }
            for index in stride(from: 0, to: values.count, by: 2) {
                let named = try Self.writableFormat(values[index], quoted: ServeRequestError.quoted(values[index]), origin: origin, registry: registry)
                guard let number = Int(values[index + 1]), (0...100).contains(number) else {
                    throw .badRequest("option \(quoted)\(origin): quality \(ServeRequestError.quoted(values[index + 1])) is not in 0...100")
                }
                formatQuality[named] = number == 0 ? nil : number
            }
        case "max_bytes":
            maxBytes = try option.count(option.onlyArgument())
        case "metadata":
            let given = try value("metadata:none|keep|strip")
            guard let policy = ImageEncodingOptions.MetadataPolicy(rawValue: given) else {
                throw .badRequest("option \(quoted)\(origin): metadata is none, keep or strip")
            }
            metadata = policy
        case "strip_metadata":
            metadata = try flag() ? .none : .keep
        case "keep_copyright":
            keepCopyright = try flag()
        case "strip_color_profile":
            color = try flag() ? .srgb : .keep
        case "frames":
            switch try value("frames:first|all") {
            case "first": firstFrameOnly = true
            case "all": firstFrameOnly = false
            default: throw .badRequest("option \(quoted)\(origin): frames is first or all")
            }
        case "disable_animation":
            firstFrameOnly = try flag()
        case "page":
            page = try option.count(option.onlyArgument())
        case "pages":
            let count = try option.count(option.onlyArgument())
            guard count > 0 else { throw .badRequest("option \(quoted)\(origin): pages must be at least 1") }
            pages = count
        case "auto_rotate":
            autoRotate = try flag()
        case "skip_processing":
            for text in values where !text.isEmpty {
                guard let named = ImageFormat(fileExtension: text) else {
                    throw .badRequest("option \(quoted)\(origin): \(ServeRequestError.quoted(text)) names no image format")
                }
                skipProcessing.insert(named)
            }
        case "cachebuster":
            guard segment.arguments.count <= 1 else { throw .badRequest("option \(quoted)\(origin) takes one value") }
            cachebuster = segment.arguments.first ?? ""
        case "expires":
            guard segment.arguments.count == 1, let stamp = Int(segment.arguments[0]) else {
                throw .badRequest("option \(quoted)\(origin) takes a Unix time in seconds")
            }
            expires = stamp > 0 ? stamp : nil
        case "filename":
            try option.atMost(2)
            guard let name = option.given(0) else {
                filename = nil
                return
            }
            let text: String
            if try option.optionalBool(1) == true {
                guard let bytes = Base64Text.decode(name.utf8, .urlSafe), let decoded = String(validating: bytes, as: UTF8.self) else {
                    throw .badRequest("option \(quoted)\(origin): the file name is not base64url of UTF-8 text")
                }
                text = decoded
            } else {
                text = PercentDecoding.lenient(name) ?? name
            }
            // It goes into a response header: a line break there would start a header of the client's choosing.
            guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .badRequest("option \(quoted)\(origin): the file name has control characters")
            }
            filename = text
        case "return_attachment":
            attachment = try flag()
        case "max_src_resolution":
            let megapixels = try option.positiveNumber(option.onlyArgument())
            maxSourcePixels = Int((megapixels * 1_000_000).rounded())
        case "max_src_file_size":
            maxSourceBytes = try option.count(option.onlyArgument())
        case "max_animation_frames":
            let frames = try option.count(option.onlyArgument())
            guard frames > 0 else { throw .badRequest("option \(quoted)\(origin): at least 1 frame") }
            maxSourceFrames = frames
        default:
            throw .badRequest("unknown option \(quoted)\(origin)")
        }
    }

    /// The format `name` (an extension) names, when the server can write it.
    static func writableFormat(_ name: String, quoted: String, origin: String, registry: ImageCoderRegistry) throws(ServeRequestError) -> ImageFormat {
        guard let named = ImageFormat(fileExtension: name), registry.canEncode(named) else {
            throw .badRequest("format \(quoted)\(origin) cannot be written (\(writable(registry, auto: true)))")
        }
        return named
    }

    private mutating func appendProcessor(_ text: String, quoted: String, origin: String) throws(ServeRequestError) {
        let parsed: any ImageProcessor
        do {
            parsed = try ImageProcessorSpec.parse(text)
        } catch MagpieError.processingFailed(reason: .invalidSpecification(_, let message)) {
            throw .badRequest("bad option \(quoted)\(origin): \(message)")
        } catch {
            throw .badRequest("bad option \(quoted)\(origin): \(error)")
        }
        // A single processor stays itself rather than a chain of one; `|>` flattens longer chains.
        processor = processor.identifier.isEmpty ? parsed : processor |> parsed
    }
}
