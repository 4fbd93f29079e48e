extension ServeOptions {
    /// Applies one option segment (presets already expanded).
    ///
    /// - Parameters:
    ///   - segment: The segment's text.
    ///   - origin: ` (from preset "…")` or empty, appended to error messages.
    ///   - format: The format set by `format:` so far; the extension is checked against it afterwards.
    ///   - registry: The coders, asked which formats can be written.
    mutating func apply(
        _ segment: String, origin: String, format: inout RequestedFormat?, registry: ImageCoderRegistry
    ) throws(ServeRequestError) {
        let text = segment.hasSuffix(":") ? String(segment.dropLast()) : segment
        let quoted = ServeRequestError.quoted(segment)
        guard !text.isEmpty else { throw .badRequest("empty option\(origin)") }
        guard !text.contains("|") else {
            throw .badRequest("option \(quoted)\(origin) contains \"|\": give one processor per segment")
        }
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        let name = fields[0].lowercased()
        let values = fields.dropFirst().map { $0.lowercased() }
        func value(_ usage: String) throws(ServeRequestError) -> String {
            guard values.count == 1, !values[0].isEmpty else {
                throw .badRequest("option \(quoted)\(origin) takes one value (\(usage))")
            }
            return values[0]
        }
        if name == "color", values.count == 1, let handling = ColorHandling(rawValue: values[0]) {
            color = handling
            return
        }
        switch name {
        case "format":
            let given = try value("format:jpeg|png|webp|avif|gif|jxl|auto")
            if given == "auto" {
                format = .auto
                break
            }
            guard let named = ImageFormat(fileExtension: given), registry.canEncode(named) else {
                throw .badRequest("format \(ServeRequestError.quoted(given))\(origin) cannot be written (\(Self.writable(registry, auto: true)))")
            }
            format = .fixed(named)
        case "quality":
            let given = try value("quality:1...100")
            guard given.allSatisfy(\.isASCII), given.allSatisfy(\.isNumber), let number = Int(given), (1...100).contains(number)
            else { throw .badRequest("quality \(ServeRequestError.quoted(given))\(origin) is not a whole number in 1...100") }
            quality = number
        case "metadata":
            let given = try value("metadata:none|keep|strip")
            guard let policy = ImageEncodingOptions.MetadataPolicy(rawValue: given) else {
                throw .badRequest("option \(quoted)\(origin): metadata is none, keep or strip")
            }
            metadata = policy
        case "frames":
            switch try value("frames:first|all") {
            case "first": firstFrameOnly = true
            case "all": firstFrameOnly = false
            default: throw .badRequest("option \(quoted)\(origin): frames is first or all")
            }
        default:
            try appendProcessor(text, name: name, quoted: quoted, origin: origin)
        }
    }

    private mutating func appendProcessor(_ text: String, name: String, quoted: String, origin: String) throws(ServeRequestError) {
        guard ImageProcessorSpec.processorNames.contains(name) else {
            throw .badRequest("unknown option \(quoted)\(origin) (known: \(Self.knownNames.joined(separator: ", ")))")
        }
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
