extension ImageProcessorSpec {
    /// Grammar entries of the geometry processors (downsample, resize, crop, round, border, flip, rotate).
    static let geometryEntries: [Entry] = [
        Entry(names: ["downsample"], usage: "downsample:WxH  fit inside WxH, decoding at reduced size when possible") { args in
            DownsamplingImageProcessor(size: try args.size(try args.required(0, "size"), "size"))
        },
        Entry(names: ["resize"], usage: "resize:WxH[:none|fit|fill]  resize with Lanczos-3 (none stretches; stretch = none)") { args in
            let size = try args.size(try args.required(0, "size"), "size")
            var mode = ContentMode.none
            if let text = args.positional(1) {
                guard let parsed = ContentMode(specName: text) else { throw args.error("unknown mode \"\(text)\"") }
                mode = parsed
            }
            return ResizingImageProcessor(referenceSize: size, mode: mode)
        },
        Entry(names: ["crop"], usage: "crop:WxH[:center|top|bottom|left|right|topleft|topright|bottomleft|bottomright|X,Y]  cut out WxH") { args in
            let size = try args.size(try args.required(0, "size"), "size")
            guard let text = args.positional(1) else { return CroppingImageProcessor(size: size) }
            return CroppingImageProcessor(size: size, anchor: try args.anchor(text))
        },
        Entry(
            names: ["gcrop"],
            usage: "gcrop:WxH[:GRAVITY][:dpr=N]  cut out WxH by gravity: ce, no, so, ea, we, noea, nowe, soea, sowe (with X:Y offsets), fp:X:Y, sm (smart)"
        ) { args in
            let size = try args.size(try args.required(0, "size"), "size")
            let text = args.remainingPositional(from: 1).joined(separator: ":")
            guard let gravity = text.isEmpty ? .center : Gravity(specText: text) else { throw args.error("unknown gravity \"\(text)\"") }
            let scale = try args.named("dpr").map { try args.number($0, "dpr") } ?? 1
            guard scale > 0 else { throw args.error("dpr must be positive") }
            return GravityCropProcessor(size: size, gravity: gravity, offsetScale: scale)
        },
        Entry(names: ["round"], usage: "round:R[:size=WxH][:corners=tl,tr,bl,br|all][:bg=RRGGBBAA]  round corners (R in pixels, N% of the width, N%h of the height)") { args in
            let radius = try args.radius(try args.required(0, "radius"))
            let size = try args.named("size").map { try args.size($0, "size") }
            let corners = try args.named("corners").map { try args.corners($0) } ?? .all
            let background = try args.named("bg").map { try args.color($0, "bg") }
            return RoundCornerImageProcessor(cornerRadius: radius, targetSize: size, roundingCorners: corners, backgroundColor: background)
        },
        Entry(names: ["border"], usage: "border:WIDTH:RRGGBBAA[:radius=R][:corners=tl,tr,bl,br|all]  draw a border inside the bounds") { args in
            let width = try args.number(try args.required(0, "width"), "width")
            guard width >= 0 else { throw args.error("width \(width) is negative") }
            let color = try args.color(try args.required(1, "colour"), "colour")
            let radius = try args.named("radius").map { try args.radius($0) } ?? .point(0)
            let corners = try args.named("corners").map { try args.corners($0) } ?? .all
            return BorderImageProcessor(border: Border(color: color, lineWidth: width, radius: radius, roundingCorners: corners))
        },
        Entry(names: ["flip"], usage: "flip:h|v|hv  mirror horizontally, vertically or both") { args in
            let text = try args.required(0, "direction")
            guard let direction = FlipDirection(specName: text) else { throw args.error("unknown direction \"\(text)\"") }
            return FlipImageProcessor(direction)
        },
        Entry(names: ["rotate"], usage: "rotate:90|180|270  rotate clockwise") { args in
            let text = try args.required(0, "degrees")
            guard let degrees = Int(text), degrees % 90 == 0 else { throw args.error("degrees \"\(text)\" is not a multiple of 90") }
            return RotationImageProcessor(degrees: degrees)
        },
    ]
}

extension ProcessorArguments {
    /// A radius: pixels (`12`), a percentage of the width (`50%`, `50%w`) or of the height (`50%h`).
    func radius(_ text: String) throws -> CornerRadius {
        guard let radius = CornerRadius(specText: text) else {
            throw error("radius \"\(text)\" is not a non-negative number, N% or N%h")
        }
        return radius
    }

    /// `all`, `none` or a comma-separated list of `tl`, `tr`, `bl`, `br`.
    func corners(_ text: String) throws -> RectCorner {
        guard let corners = RectCorner(specText: text) else {
            throw error("corners \"\(text)\" is not all, none or a list of tl, tr, bl, br")
        }
        return corners
    }

    /// A named anchor (`topleft`) or `X,Y` fractions within 0...1.
    func anchor(_ text: String) throws -> CropAnchor {
        if let named = CropAnchor.named.first(where: { $0.0 == text.lowercased() }) { return named.1 }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw error("unknown anchor \"\(text)\"") }
        return CropAnchor(x: try number(String(parts[0]), "anchor x", in: 0...1),
                          y: try number(String(parts[1]), "anchor y", in: 0...1))
    }
}

extension CornerRadius {
    /// The text form: `12`, `50%` (width fraction) or `50%h` (height fraction).
    var specText: String {
        switch self {
        case .point(let value): DecimalText.format(value)
        case .widthFraction(let fraction): DecimalText.format(fraction, shiftedBy: 2) + "%"
        case .heightFraction(let fraction): DecimalText.format(fraction, shiftedBy: 2) + "%h"
        }
    }

    /// Parses the text form; nil when malformed or negative.
    init?(specText text: String) {
        let lower = text.lowercased()
        if let percent = lower.firstIndex(of: "%") {
            let suffix = lower[lower.index(after: percent)...]
            // The decimal point moves in the text, so `N%` reads back exactly as written.
            guard suffix.isEmpty || suffix == "w" || suffix == "h",
                  let shifted = DecimalText.shifted(String(lower[..<percent]), by: -2),
                  let fraction = Double(shifted), fraction.isFinite, fraction >= 0 else { return nil }
            self = suffix == "h" ? .heightFraction(fraction) : .widthFraction(fraction)
        } else {
            guard let value = Double(lower), value.isFinite, value >= 0 else { return nil }
            self = .point(value)
        }
    }
}

extension RectCorner {
    private static let names: [(String, RectCorner)] = [
        ("tl", .topLeft), ("tr", .topRight), ("bl", .bottomLeft), ("br", .bottomRight),
    ]

    /// `all`, `none` or the corners as `tl,tr,bl,br` (in that order).
    var specText: String {
        if self == .all { return "all" }
        if isEmpty { return "none" }
        return Self.names.filter { contains($0.1) }.map(\.0).joined(separator: ",")
    }

    /// Parses the text form; nil when a name is unknown.
    init?(specText text: String) {
        switch text.lowercased() {
        case "all": self = .all
        case "none": self = []
        default:
            var corners: RectCorner = []
            for name in text.lowercased().split(separator: ",", omittingEmptySubsequences: false) {
                guard let corner = Self.names.first(where: { $0.0 == name })?.1 else { return nil }
                corners.insert(corner)
            }
            self = corners
        }
    }
}

/// Decimal numbers for identifiers: the shortest text that reads back as the same `Double`,
/// without exponent or a trailing `.0` (`12`, `0.075`).
package enum DecimalText {
    /// `value` times 10^`shift`, written exactly (the shift moves the decimal point in the text,
    /// so no rounding happens).
    package static func format(_ value: Double, shiftedBy shift: Int = 0) -> String {
        guard value.isFinite, let text = shifted("\(value)", by: shift) else { return "\(value)" }
        return text
    }

    /// The decimal number `text` (optionally signed, with exponent) times 10^`shift`, in plain
    /// notation; nil when `text` is not a decimal number.
    static func shifted(_ text: String, by shift: Int) -> String? {
        var rest = Substring(text)
        let negative = rest.first == "-"
        if negative || rest.first == "+" { rest = rest.dropFirst() }
        var exponent = 0
        if let e = rest.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let value = Int(rest[rest.index(after: e)...]), abs(value) < 400 else { return nil }
            exponent = value
            rest = rest[..<e]
        }
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let integer = parts[0], fraction = parts.count == 2 ? parts[1] : ""
        var digits = Array(integer + fraction)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isWholeNumber }) else { return nil }
        var point = integer.count + exponent + shift
        if point < 0 {
            digits.insert(contentsOf: repeatElement("0", count: -point), at: 0)
            point = 0
        }
        if point > digits.count { digits.append(contentsOf: repeatElement("0", count: point - digits.count)) }
        let whole = String(digits[..<point].drop { $0 == "0" })
        let decimals = String(digits[point...].reversed().drop { $0 == "0" }.reversed())
        let body = (whole.isEmpty ? "0" : whole) + (decimals.isEmpty ? "" : "." + decimals)
        return (negative && body != "0" ? "-" : "") + body
    }
}
