import Magpie

/// One of thumbor's filters from a URL's `filters:` part, its arguments checked. Names thumbor does not know are
/// dropped before this (thumbor ignores them too); a known name with arguments thumbor's own pattern would not take
/// is a 400 naming the filter (thumbor skips it silently, which hides typos: `quality(eighty)` served at 80).
public enum ThumborFilter: Sendable, Hashable {
    /// `quality(N)`: the encoder's quality, 0...100.
    case quality(Int)
    /// `format(NAME)`: the output format (`jpeg`, `png`, `gif`, `webp`, `avif`, `heif`); nil for a name thumbor
    /// refuses (the source's format then, as in thumbor).
    case format(ImageFormat?)
    /// `blur(RADIUS[,SIGMA])`: a Gaussian blur of the given standard deviation (the radius when 0).
    case blur(radius: Int, sigma: Double)
    /// `sharpen(AMOUNT,RADIUS,LUMINANCE_ONLY)`: an unsharp mask.
    case sharpen(amount: Double, radius: Double, luminanceOnly: Bool)
    /// `brightness(N)`: −100...100 % of full scale added to every channel.
    case brightness(Int)
    /// `grayscale()`.
    case grayscale
    /// `rotate(DEGREES)`: counter-clockwise, a multiple of 90 (others are ignored, as thumbor does).
    case rotate(Int)
    /// `background_color(COLOR)`: translucent pixels flattened onto the colour.
    case backgroundColor(RGBAColor)
    /// `fill(COLOR[,FILL_TRANSPARENT])`: the image centred on a canvas of the requested size in the colour (nil for
    /// `transparent`); with the flag, translucent pixels are flattened onto it too.
    case fill(RGBAColor?, fillTransparent: Bool)
    /// `round_corner(A[|B],R,G,B[,TRANSPARENT])`: rounded corners over the colour, or cut out.
    case roundCorner(horizontal: Int, vertical: Int, color: RGBAColor, transparent: Bool)
    /// `upscale()`: in `fit-in`, enlarge to fit the box.
    case upscale
    /// `no_upscale()`: the requested size is capped by the source's.
    case noUpscale
    /// `stretch()`: resize to the requested size without cropping.
    case stretch
    /// `proportion(P)`: scale the result by 0 < P ≤ 1.
    case proportion(Double)
    /// `max_bytes(N)`: lower the quality until the result fits in N bytes.
    case maxBytes(Int)
    /// `strip_icc()`: convert to sRGB and write no colour profile.
    case stripICC
    /// `strip_exif()`: write no EXIF.
    case stripEXIF
    /// `contrast(N)`: −100...100; the distance of every channel from mid-grey scaled by ((N + 100)² // 100) / 100.
    case contrast(Int)
    /// `rgb(R,G,B)`: −100...100 % of full scale added to each channel.
    case rgb(red: Int, green: Int, blue: Int)
    /// `saturation(F)`: 1 unchanged, 0 grey, above 1 more colourful (a negative factor acts as 0).
    case saturation(Double)
    /// `noise(AMOUNT[,SEED])`: grey grain of 0...100 steps, from a seeded generator (the same URL, the same bytes).
    case noise(amount: Int, seed: Int)
    /// `equalize()`: histogram equalisation of each colour channel.
    case equalize
    /// `curve(ALL,R,G,B)`: tone curves, each a list of `(x,y)` control points.
    case curve(all: [ToneCurveProcessor.Point], red: [ToneCurveProcessor.Point], green: [ToneCurveProcessor.Point],
               blue: [ToneCurveProcessor.Point])
    /// `convolution(W;W;…,COLUMNS[,NORMALIZE])`: a convolution kernel, row by row, normalised by default.
    case convolution(kernel: [Double], columns: Int, normalize: Bool)
    /// `watermark(URL,X,Y,ALPHA[,W_RATIO,H_RATIO])`: an image fetched from URL drawn over the result.
    case watermark(ThumborWatermark)
    /// `focal(AxB:CxD)`: a focal region (source pixels) for the automatic crop, instead of the alignment or detection.
    case focal(ThumborOptions.Box)
    /// `extract_focal()`: the image URL is itself a thumbor URL with a manual crop; its image is loaded whole and the
    /// crop becomes a focal region (resolved while parsing: the options then hold a ``focal(_:)``).
    case extractFocal
    /// `autojpg([ENABLED])`: a PNG result without translucent pixels is written as JPEG.
    case autoJPG(Bool)
    /// `max_age(N)`: the answer's `Cache-Control: max-age` in seconds.
    case maxAge(Int)
    /// `fill(blur[,FILL_TRANSPARENT])`: the canvas is the image itself, blurred and stretched to the requested size.
    case fillBlur(fillTransparent: Bool)
    /// `fill(auto[,FILL_TRANSPARENT])`: the canvas is the image's mean colour.
    case fillAuto(fillTransparent: Bool)

    /// The filter's name, as written in URLs.
    public var name: String {
        switch self {
        case .quality: "quality"
        case .format: "format"
        case .blur: "blur"
        case .sharpen: "sharpen"
        case .brightness: "brightness"
        case .grayscale: "grayscale"
        case .rotate: "rotate"
        case .backgroundColor: "background_color"
        case .fill: "fill"
        case .roundCorner: "round_corner"
        case .upscale: "upscale"
        case .noUpscale: "no_upscale"
        case .stretch: "stretch"
        case .proportion: "proportion"
        case .maxBytes: "max_bytes"
        case .stripICC: "strip_icc"
        case .stripEXIF: "strip_exif"
        case .contrast: "contrast"
        case .rgb: "rgb"
        case .saturation: "saturation"
        case .noise: "noise"
        case .equalize: "equalize"
        case .curve: "curve"
        case .convolution: "convolution"
        case .watermark: "watermark"
        case .focal: "focal"
        case .extractFocal: "extract_focal"
        case .autoJPG: "autojpg"
        case .maxAge: "max_age"
        case .fillBlur, .fillAuto: "fill"
        }
    }

    /// The filter in the processor's canonical text; nil for those that only set output options (the server's
    /// normalised options text carries those).
    var canonicalText: String? {
        func number(_ value: Double) -> String { DecimalText.format(value) }
        switch self {
        case .quality, .format, .maxBytes, .stripICC, .stripEXIF, .maxAge, .extractFocal: return nil
        case .blur(let radius, let sigma): return "blur:\(radius):\(number(sigma == 0 ? Double(radius) : sigma))"
        case .sharpen(let amount, let radius, let luminance): return "sharpen:\(number(amount)):\(number(radius)):\(luminance ? 1 : 0)"
        case .brightness(let value): return "brightness:\(value)"
        case .grayscale: return "grayscale"
        case .rotate(let degrees): return "rotate:\(degrees)"
        case .backgroundColor(let color): return "background_color:\(color.hex)"
        case .fill(let color, let fillTransparent): return "fill:\(color?.hex ?? "transparent"):\(fillTransparent ? 1 : 0)"
        case .roundCorner(let a, let b, let color, let transparent):
            return "round_corner:\(a)|\(b):\(color.hex.prefix(6)):\(transparent ? 1 : 0)"
        case .upscale: return "upscale"
        case .noUpscale: return "no_upscale"
        case .stretch: return "stretch"
        case .proportion(let value): return "proportion:\(number(value))"
        case .contrast(let value): return "contrast:\(value)"
        case .rgb(let red, let green, let blue): return "rgb:\(red):\(green):\(blue)"
        case .saturation(let value): return "saturation:\(number(value))"
        case .noise(let amount, let seed): return "noise:\(amount):\(seed)"
        case .equalize: return "equalize"
        case .curve(let all, let red, let green, let blue):
            return "curve:" + ToneCurveProcessor(all: all, red: red, green: green, blue: blue).identifier.dropFirst("curves:".count)
        case .convolution(let kernel, let columns, let normalize):
            return "convolution:\(columns):\(normalize ? 1 : 0):" + kernel.map(number).joined(separator: ";")
        case .watermark(let mark): return "watermark:" + mark.canonicalText
        case .focal(let box): return "focal:\(box.left)x\(box.top):\(box.right)x\(box.bottom)"
        case .autoJPG(let enabled): return "autojpg:\(enabled ? 1 : 0)"
        case .fillBlur(let fillTransparent): return "fill:blur:\(fillTransparent ? 1 : 0)"
        case .fillAuto(let fillTransparent): return "fill:auto:\(fillTransparent ? 1 : 0)"
        }
    }

    /// Filter names thumbor 7 knows that Magpie does not run yet: a 400 says so rather than serving something else.
    static let unsupportedNames: Set<String> = ["colorize", "frame", "redeye", "cover"]

    /// The filters in `text` (what follows `filters:`, up to and including its last `)`), in order.
    ///
    /// - Throws: A 400 ``ServeRequestError`` naming a filter whose arguments are malformed or which Magpie does not
    ///   run yet.
    static func parseList(_ text: Substring) throws(ServeRequestError) -> [ThumborFilter] {
        // thumbor splits on "):" and nothing else: an argument may hold ":" (a URL) but not "):".
        var filters: [ThumborFilter] = []
        // thumbor reads its path percent-decoded (tornado decodes it): `[`, `(` or a watermark's URL may come escaped.
        let text = PercentDecoding.lenient(text).map { Substring($0) } ?? text
        for piece in splitCalls(text) where !piece.isEmpty {
            let call = piece.hasSuffix(")") ? String(piece) : piece + ")"
            guard let open = call.firstIndex(of: "(") else { continue }  // no call: thumbor matches no filter either
            let name = String(call[..<open])
            let inner = call[call.index(after: open)..<call.index(before: call.endIndex)]
            let arguments = inner.isEmpty ? [] : splitArguments(inner)
                .map { String($0.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()) }
            if let filter = try parse(name: name, arguments: arguments, text: call) { filters.append(filter) }
        }
        return filters
    }

    /// `text` cut at the commas outside brackets, parentheses and single quotes (`curve`'s lists hold commas, and
    /// thumbor's quoted strings may), a quoted argument's quotes dropped.
    private static func splitArguments(_ text: Substring) -> [Substring] {
        var pieces: [Substring] = []
        var depth = 0, quoted = false
        var start = text.startIndex
        for index in text.indices {
            let character = text[index]
            if character == "'" {
                quoted.toggle()
            } else if quoted {
                continue
            } else if character == "[" || character == "(" {
                depth += 1
            } else if character == "]" || character == ")" {
                depth -= 1
            } else if character == ",", depth == 0 {
                pieces.append(text[start..<index])
                start = text.index(after: index)
            }
        }
        pieces.append(text[start...])
        return pieces.map { piece in
            let trimmed = piece.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
            let inner = Substring(String(trimmed))
            return inner.count >= 2 && inner.hasPrefix("'") && inner.hasSuffix("'") ? inner.dropFirst().dropLast() : piece
        }
    }

    /// `[(x,y),(x,y),…]` with x and y in 0...255 and x increasing; nil for anything else.
    private static func curvePoints(_ text: String) -> [ToneCurveProcessor.Point]? {
        let compact = text.filter { !$0.isWhitespace }
        guard compact.hasPrefix("["), compact.hasSuffix("]") else { return nil }
        let body = compact.dropFirst().dropLast()
        if body.isEmpty { return [] }
        guard body.hasPrefix("("), body.hasSuffix(")") || body.hasSuffix("),") else { return nil }
        var points: [ToneCurveProcessor.Point] = []
        for pair in body.dropFirst().split(separator: "(", omittingEmptySubsequences: false) {
            let numbers = pair.drop(while: { $0 == "(" }).prefix { $0 != ")" }.split(separator: ",", omittingEmptySubsequences: false)
            guard numbers.count == 2, pair.hasSuffix(")") || pair.hasSuffix("),"),
                let x = UInt8(numbers[0]), let y = UInt8(numbers[1])
            else { return nil }
            if let last = points.last, last.x >= x { return nil }
            points.append(ToneCurveProcessor.Point(x: x, y: y))
        }
        return points
    }

    /// `text` cut at every `):`, the `)` dropped (as Python's `split("):")`).
    private static func splitCalls(_ text: Substring) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(after: index)
            if text[index] == ")", next < text.endIndex, text[next] == ":" {
                pieces.append(text[start..<index])
                start = text.index(after: next)
                index = start
            } else {
                index = next
            }
        }
        pieces.append(text[start...])
        return pieces
    }

    /// One filter; nil for a name thumbor does not know (ignored).
    static func parse(name: String, arguments: [String], text: String) throws(ServeRequestError) -> ThumborFilter? {
        func bad(_ problem: String) -> ServeRequestError {
            .badRequest("filter \(ServeRequestError.quoted(text)) (\(name)): \(problem)")
        }
        func count(_ range: ClosedRange<Int>) throws(ServeRequestError) {
            guard range.contains(arguments.count) else {
                throw bad(range.lowerBound == range.upperBound
                    ? "takes \(range.lowerBound) argument\(range.lowerBound == 1 ? "" : "s")"
                    : "takes \(range.lowerBound) to \(range.upperBound) arguments")
            }
        }
        func integer(_ index: Int, _ range: ClosedRange<Int> = Int.min...Int.max) throws(ServeRequestError) -> Int {
            let text = arguments[index]
            guard let value = Int(text), range.contains(value) else {
                throw bad("\(ServeRequestError.quoted(text)) is not a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }
        func decimal(_ index: Int) throws(ServeRequestError) -> Double {
            guard let value = Double(arguments[index]), value.isFinite else {
                throw bad("\(ServeRequestError.quoted(arguments[index])) is not a number")
            }
            return value
        }
        func boolean(_ index: Int) throws(ServeRequestError) -> Bool {
            guard index < arguments.count else { return false }
            switch arguments[index].lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            default: throw bad("\(ServeRequestError.quoted(arguments[index])) is not true, false, 1 or 0")
            }
        }
        func color(_ index: Int) throws(ServeRequestError) -> RGBAColor {
            guard let value = CSSColor.parse(arguments[index]) else {
                throw bad("\(ServeRequestError.quoted(arguments[index])) is not a colour name or hex colour")
            }
            return value
        }
        if unsupportedNames.contains(name) {
            throw bad("not supported by Magpie yet (see docs/DEPLOYMENT.md, Coming from thumbor)")
        }
        switch name {
        case "quality":
            try count(1...1)
            return .quality(try integer(0, 0...100))
        case "format":
            try count(1...1)
            switch arguments[0].lowercased() {
            case "jpeg", "jpg": return .format(.jpeg)
            case "png": return .format(.png)
            case "gif": return .format(.gif)
            case "webp": return .format(.webp)
            case "avif": return .format(.avif)
            case "heif", "heic": throw bad("HEIF output is not written by Magpie (it reads HEIF)")
            default: return .format(nil)
            }
        case "blur":
            try count(1...2)
            let radius = try integer(0, 1...150)
            return .blur(radius: radius, sigma: arguments.count > 1 ? max(0, try decimal(1)) : 0)
        case "sharpen":
            try count(3...3)
            return .sharpen(amount: try decimal(0), radius: try decimal(1), luminanceOnly: try boolean(2))
        case "brightness":
            try count(1...1)
            return .brightness(try integer(0, -100...100))
        case "grayscale":
            try count(0...0)
            return .grayscale
        case "rotate":
            try count(1...1)
            let degrees = try integer(0)
            return degrees % 90 == 0 ? .rotate(((degrees % 360) + 360) % 360) : nil
        case "background_color":
            try count(1...1)
            return .backgroundColor(try color(0))
        case "fill":
            try count(1...2)
            switch arguments[0].lowercased() {
            case "transparent": return .fill(nil, fillTransparent: try boolean(1))
            case "blur": return .fillBlur(fillTransparent: try boolean(1))
            case "auto": return .fillAuto(fillTransparent: try boolean(1))
            default: return .fill(try color(0), fillTransparent: try boolean(1))
            }
        case "round_corner":
            try count(4...5)
            let radii = arguments[0].split(separator: "|", omittingEmptySubsequences: false)
            guard (1...2).contains(radii.count), let a = Int(radii[0]), a >= 0, let b = radii.count == 2 ? Int(radii[1]) : a, b >= 0 else {
                throw bad("\(ServeRequestError.quoted(arguments[0])) is not RADIUS or RADIUS|RADIUS")
            }
            let channels = try [1, 2, 3].map { index throws(ServeRequestError) in UInt8(try integer(index, 0...255)) }
            return .roundCorner(horizontal: a, vertical: b, color: RGBAColor(red: channels[0], green: channels[1], blue: channels[2]),
                                transparent: try boolean(4))
        case "upscale":
            try count(0...0)
            return .upscale
        case "no_upscale":
            try count(0...0)
            return .noUpscale
        case "stretch":
            try count(0...0)
            return .stretch
        case "proportion":
            try count(1...1)
            let value = try decimal(0)
            return value > 0 && value <= 1 ? .proportion(value) : nil  // thumbor ignores others
        case "max_bytes":
            try count(1...1)
            return .maxBytes(try integer(0, 1...Int.max))
        case "strip_icc":
            try count(0...0)
            return .stripICC
        case "strip_exif":
            try count(0...0)
            return .stripEXIF
        case "contrast":
            try count(1...1)
            return .contrast(try integer(0, -100...100))
        case "rgb":
            try count(3...3)
            return .rgb(red: try integer(0, -100...100), green: try integer(1, -100...100), blue: try integer(2, -100...100))
        case "saturation":
            try count(1...1)
            return .saturation(try decimal(0))
        case "noise":
            try count(1...2)
            return .noise(amount: try integer(0, 0...100), seed: arguments.count > 1 ? try integer(1, 0...Int(Int32.max)) : 0)
        case "equalize":
            try count(0...0)
            return .equalize
        case "curve":
            try count(4...4)
            let curves = try (0..<4).map { index throws(ServeRequestError) in
                guard let points = curvePoints(arguments[index]) else {
                    throw bad("\(ServeRequestError.quoted(arguments[index])) is not a list [(x,y),…] of points in 0...255 with increasing x")
                }
                return points
            }
            return .curve(all: curves[0], red: curves[1], green: curves[2], blue: curves[3])
        case "convolution":
            try count(2...3)
            let weights = arguments[0].split(separator: ";", omittingEmptySubsequences: false).map { Double($0) }
            guard !weights.isEmpty, weights.allSatisfy({ $0?.isFinite == true }) else {
                throw bad("\(ServeRequestError.quoted(arguments[0])) is not numbers separated by \";\"")
            }
            let kernel = weights.compactMap { $0 }
            let columns = try integer(1, 1...49)
            guard kernel.count % columns == 0, columns % 2 == 1, (kernel.count / columns) % 2 == 1, kernel.count / columns <= 49 else {
                throw bad("\(kernel.count) weights in \(columns) columns is not an odd × odd kernel of at most 49 × 49")
            }
            return .convolution(kernel: kernel, columns: columns, normalize: arguments.count > 2 ? try boolean(2) : true)
        case "watermark":
            try count(4...6)
            guard let mark = ThumborWatermark(arguments: arguments) else {
                throw bad("expects URL,X,Y,ALPHA[,W_RATIO,H_RATIO]: X and Y a number of pixels (-N from the far edge), "
                    + "NNp a percentage, center or repeat; ALPHA 0...100; the ratios 0...100 or none")
            }
            return .watermark(mark)
        case "focal":
            try count(1...1)
            let corners = arguments[0].split(separator: ":", omittingEmptySubsequences: false)
                .map { $0.split(separator: "x", omittingEmptySubsequences: false).map { Int($0) } }
            guard corners.count == 2, corners.allSatisfy({ $0.count == 2 && $0.allSatisfy { ($0 ?? -1) >= 0 } }) else {
                throw bad("\(ServeRequestError.quoted(arguments[0])) is not LEFTxTOP:RIGHTxBOTTOM")
            }
            let box = ThumborOptions.Box(left: corners[0][0]!, top: corners[0][1]!, right: corners[1][0]!, bottom: corners[1][1]!)
            return box.right != box.left && box.bottom != box.top ? .focal(box) : nil  // thumbor skips an empty region
        case "extract_focal":
            try count(0...0)
            return .extractFocal
        case "autojpg":
            try count(0...1)
            return .autoJPG(arguments.isEmpty ? true : try boolean(0))
        case "max_age":
            try count(1...1)
            return .maxAge(try integer(0, 0...Int(Int32.max)))
        default:
            return nil
        }
    }
}
