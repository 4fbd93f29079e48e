/// The text form of processors and chains, as the `magpie` command line's `--processor` takes it.
///
/// A chain is processors joined by `|`, run left to right: `resize:256x256:fit|blur:4|round:12`.
/// One processor is `name` followed by `:`-separated arguments: positional ones first, then
/// optional `key=value` ones in any order (`round:12:corners=tl,tr:bg=ffffff`). Sizes are `WxH`
/// in pixels, colours `RRGGBB` or `RRGGBBAA` in hex (an optional leading `#`), numbers decimal.
/// Every built-in processor's ``ImageProcessor/identifier`` is its canonical text form, so parsing an
/// identifier gives back an equal processor. ``grammar`` lists the processors and their arguments.
public enum ImageProcessorSpec {
    /// One processor's entry in the grammar.
    struct Entry: Sendable {
        /// Names accepted for it (the first is canonical).
        let names: [String]
        /// One line for the help text: the syntax and what it does.
        let usage: String
        let parse: @Sendable (ProcessorArguments) throws -> any ImageProcessor
    }

    static let entries: [Entry] = geometryEntries + colorEntries

    /// Every processor name ``parse(_:)`` accepts (canonical names and aliases such as `bw`), in the grammar's order.
    public static var processorNames: [String] { entries.flatMap(\.names) }

    /// The grammar, one processor per line after a first line on chaining, for `--help` texts.
    public static var grammar: String {
        (["Chain processors with '|'; each is name:arg:arg (optional args as key=value)."] + entries.map { "  " + $0.usage })
            .joined(separator: "\n")
    }

    /// The processor (a chain when there is more than one) described by `text`; an empty text
    /// is the default processor.
    ///
    /// - Parameter text: One processor or a `|`-separated chain, for example `resize:256x256:fit|blur:4`;
    ///   whitespace around each part is ignored, and processor names are case-insensitive.
    /// - Returns: The processor, a ``ChainedImageProcessor`` for several, or ``DefaultImageProcessor/default`` for
    ///   `""`.
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidSpecification(_:message:)`` naming the bad part (an unknown name,
    ///   a missing, malformed or unknown argument, an empty part).
    public static func parse(_ text: String) throws -> any ImageProcessor {
        let parts = text.split(separator: "|", omittingEmptySubsequences: false).map {
            $0.trimmingASCIIWhitespace
        }
        if parts == [""] { return DefaultImageProcessor.default }
        var chain: (any ImageProcessor)?
        for part in parts {
            let processor = try parseOne(part)
            chain = chain.map { $0 |> processor } ?? processor
        }
        return chain!
    }

    private static func parseOne(_ part: String) throws -> any ImageProcessor {
        guard !part.isEmpty else { throw invalid(part, "empty processor (two '|' in a row?)") }
        let fields = part.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let name = fields[0].lowercased()
        guard let entry = entries.first(where: { $0.names.contains(name) }) else {
            let known = entries.map { $0.names[0] }.joined(separator: ", ")
            throw invalid(part, "unknown processor \"\(fields[0])\" (known: \(known))")
        }
        let arguments = ProcessorArguments(part: part, usage: entry.usage)
        for field in fields.dropFirst() {
            if let equals = field.firstIndex(of: "=") {
                let key = field[..<equals].lowercased()
                guard !key.isEmpty else { throw invalid(part, "empty option name in \"\(field)\"") }
                guard arguments.named[key] == nil else { throw invalid(part, "option \"\(key)\" given twice") }
                arguments.named[key] = String(field[field.index(after: equals)...])
            } else {
                guard arguments.named.isEmpty else { throw invalid(part, "positional argument \"\(field)\" after key=value options") }
                arguments.positional.append(field)
            }
        }
        let processor = try entry.parse(arguments)
        try arguments.checkAllUsed()
        return processor
    }

    static func invalid(_ part: String, _ message: String) -> MagpieError {
        .processingFailed(reason: .invalidSpecification(part, message: message))
    }
}

/// The arguments of one processor in a spec, with typed accessors that throw errors naming the
/// part and the usage line.
final class ProcessorArguments {
    /// The whole part, for error messages.
    let part: String
    let usage: String
    var positional: [String] = []
    var named: [String: String] = [:]
    private var usedPositional = 0
    private var usedNamed: Set<String> = []

    init(part: String, usage: String) {
        self.part = part
        self.usage = usage
    }

    func error(_ message: String) -> MagpieError {
        ImageProcessorSpec.invalid(part, message + " (usage: \(usage))")
    }

    /// The positional argument at `index`, nil when absent (or empty); marks it used.
    func positional(_ index: Int) -> String? {
        usedPositional = max(usedPositional, index + 1)
        guard index < positional.count, !positional[index].isEmpty else { return nil }
        return positional[index]
    }

    /// The positional arguments from `index` on (empty ones included); marks them used.
    func remainingPositional(from index: Int) -> [String] {
        usedPositional = max(usedPositional, positional.count)
        return index < positional.count ? Array(positional[index...]) : []
    }

    /// The named argument `key`, nil when absent; marks it used.
    func named(_ key: String) -> String? {
        usedNamed.insert(key)
        return named[key]
    }

    /// The positional argument at `index`, required.
    func required(_ index: Int, _ what: String) throws -> String {
        guard let value = positional(index) else { throw error("missing \(what)") }
        return value
    }

    func size(_ text: String, _ what: String) throws -> PixelSize {
        guard let size = PixelSize(parsing: text) else { throw error("\(what) \"\(text)\" is not WxH with positive numbers") }
        return size
    }

    func number(_ text: String, _ what: String, in range: ClosedRange<Double>? = nil) throws -> Double {
        guard let value = Double(text), value.isFinite else { throw error("\(what) \"\(text)\" is not a number") }
        if let range, !range.contains(value) { throw error("\(what) \(text) is outside \(range.lowerBound)...\(range.upperBound)") }
        return value
    }

    func color(_ text: String, _ what: String) throws -> RGBAColor {
        guard let color = RGBAColor(hex: text) else { throw error("\(what) \"\(text)\" is not RRGGBB or RRGGBBAA hex") }
        return color
    }

    /// Fails when arguments were given that the processor did not read.
    func checkAllUsed() throws {
        if positional.count > usedPositional {
            throw error("unexpected argument \"\(positional[usedPositional])\"")
        }
        if let extra = named.keys.sorted().first(where: { !usedNamed.contains($0) }) {
            throw error("unknown option \"\(extra)\"")
        }
    }
}

extension RGBAColor {
    /// Parses `RRGGBB` or `RRGGBBAA` (optionally after `#`), in either case; nil when malformed.
    ///
    /// - Parameter text: The hex text; six digits give an opaque colour.
    public init?(hex text: String) {
        self.init(hexDigits: text.hasPrefix("#") ? text.dropFirst() : Substring(text), allowingShorthand: false)
    }

    /// Parses hex digits without `#`: 6 (`RRGGBB`, opaque) or 8 (`RRGGBBAA`), and with `allowingShorthand` also CSS's
    /// 3 (`RGB`) and 4 (`RGBA`), each digit doubled. Nil for any other length or a non-hex digit. The one hex colour
    /// reader: Magpie's specs, imgproxy's `bg` and thumbor's colours all come here.
    package init?(hexDigits digits: Substring, allowingShorthand: Bool) {
        guard digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else { return nil }
        let full: UInt32
        switch digits.count {
        case 3 where allowingShorthand, 4 where allowingShorthand:
            // Each digit d becomes dd (d × 17); three digits get an opaque alpha.
            let nibbles = (0..<digits.count).reversed().map { value >> (4 * UInt32($0)) & 0xF }
            let channels = nibbles.map { $0 * 17 } + (digits.count == 3 ? [0xFF] : [])
            full = channels.reduce(0) { $0 << 8 | $1 }
        case 6: full = value << 8 | 0xFF
        case 8: full = value
        default: return nil
        }
        self.init(
            red: UInt8(full >> 24), green: UInt8((full >> 16) & 0xFF), blue: UInt8((full >> 8) & 0xFF),
            alpha: UInt8(full & 0xFF))
    }

    /// `rrggbbaa` in lowercase hex without `#`, the form specs and identifiers use.
    public var hex: String { lowercaseHex([red, green, blue, alpha]) }
}
