import Magpie

extension ImgproxyOptions {
    /// The processing options this type holds, by every name imgproxy accepts for them (long, short and the aliases
    /// it keeps), mapped to the long name error messages use.
    static let names: [String: String] = [
        "resize": "resize", "rs": "resize", "size": "size", "s": "size",
        "resizing_type": "resizing_type", "rt": "resizing_type", "width": "width", "w": "width",
        "height": "height", "h": "height", "min-width": "min-width", "min_width": "min-width", "mw": "min-width",
        "min-height": "min-height", "min_height": "min-height", "mh": "min-height", "zoom": "zoom", "z": "zoom",
        "dpr": "dpr", "enlarge": "enlarge", "el": "enlarge", "extend": "extend", "ex": "extend",
        "extend_aspect_ratio": "extend_aspect_ratio", "extend_ar": "extend_aspect_ratio", "exar": "extend_aspect_ratio",
        "gravity": "gravity", "g": "gravity", "crop": "crop", "c": "crop", "trim": "trim", "t": "trim",
        "padding": "padding", "pd": "padding", "rotate": "rotate", "rot": "rotate", "flip": "flip", "fl": "flip",
        "background": "background", "bg": "background",
        "background_alpha": "background_alpha", "bga": "background_alpha", "blur": "blur", "bl": "blur", "sharpen": "sharpen",
        "sh": "sharpen", "pixelate": "pixelate", "pix": "pixelate", "brightness": "brightness", "br": "brightness",
        "contrast": "contrast", "co": "contrast", "saturation": "saturation", "sa": "saturation", "adjust": "adjust",
        "a": "adjust", "watermark": "watermark", "wm": "watermark",
    ]

    /// Applies option `name` (any of its spellings) with `arguments`, imgproxy's way: arguments left empty keep the
    /// value set before.
    ///
    /// - Parameters:
    ///   - name: The option's name as written (lowercased).
    ///   - arguments: Its arguments as written.
    ///   - segment: The whole segment, for error messages (default: name and arguments joined by `:`).
    /// - Throws: A 400 ``ServeRequestError`` quoting the segment and saying what is wrong with an argument or their
    ///   number.
    mutating func apply(_ name: String, _ arguments: [String], segment: String? = nil) throws(ServeRequestError) {
        let option = ImgproxyArguments(
            name: Self.names[name] ?? name, arguments: arguments, segment: segment ?? ([name] + arguments).joined(separator: ":"))
        switch option.name {
        case "resize":
            try option.atMost(8)
            if let type = try option.resizingType(0) { resizingType = type }
            if arguments.count > 1 { try applySize(option.dropping(1)) }
        case "size":
            try option.atMost(7)
            try applySize(option)
        case "resizing_type":
            try option.atMost(1)
            resizingType = try option.resizingType(0) ?? resizingType
        case "width": width = try option.count(option.onlyArgument())
        case "height": height = try option.count(option.onlyArgument())
        case "min-width": minWidth = try option.count(option.onlyArgument())
        case "min-height": minHeight = try option.count(option.onlyArgument())
        case "zoom":
            try option.atMost(2)
            zoomX = try option.positive(0) ?? zoomX
            zoomY = arguments.count > 1 ? try option.positive(1) ?? zoomY : zoomX
        case "dpr": dpr = try option.positiveNumber(option.onlyArgument())
        case "enlarge": enlarge = try option.bool(option.onlyArgument())
        case "extend":
            try option.atMost(4)
            try apply(extension: &extend, option)
        case "extend_aspect_ratio":
            try option.atMost(4)
            try apply(extension: &extendAspectRatio, option)
        case "gravity": gravity = try option.gravity(from: 0, current: gravity, allowsSmart: true)
        case "crop":
            try option.atMost(5)
            guard option.given(0) != nil else { throw option.invalid("takes a width (0 for the whole width), then a height and a gravity") }
            crop.width = try option.nonNegative(0) ?? crop.width
            crop.height = try option.nonNegative(1) ?? crop.height
            if arguments.count > 2 { crop.gravity = try option.gravity(from: 2, current: crop.gravity ?? gravity, allowsSmart: true) }
        case "trim":
            try option.atMost(4)
            guard let threshold = try option.number(0) else {
                trim = nil  // imgproxy: an empty threshold turns trimming off
                return
            }
            trim = Trim(
                threshold: threshold, color: try option.color(1),
                equalHorizontal: try option.optionalBool(2) ?? false, equalVertical: try option.optionalBool(3) ?? false)
        case "padding":
            try option.atMost(4)
            var sides = padding
            if let top = try option.countIfGiven(0) { (sides.top, sides.right, sides.bottom, sides.left) = (top, top, top, top) }
            if let right = try option.countIfGiven(1) { (sides.right, sides.left) = (right, right) }
            if let bottom = try option.countIfGiven(2) { sides.bottom = bottom }
            if let left = try option.countIfGiven(3) { sides.left = left }
            padding = sides
        case "rotate":
            let angle = try option.integer(option.onlyArgument())
            guard angle % 90 == 0 else { throw option.invalid("\(angle) is not a multiple of 90") }
            rotation = ((angle % 360) + 360) % 360
        case "flip":
            try option.atMost(2)
            flipHorizontal = try option.optionalBool(0) ?? flipHorizontal
            flipVertical = try option.optionalBool(1) ?? flipVertical
        case "background":
            switch arguments.count {
            case 0: background = nil
            case 1 where arguments[0].isEmpty: background = nil
            case 1: background = try option.color(0)
            case 3:
                let channels = try (0..<3).map { index throws(ServeRequestError) in try option.channel(index) }
                background = RGBAColor(red: channels[0], green: channels[1], blue: channels[2])
            default: throw option.invalid("takes a hex colour or R:G:B")
            }
        case "background_alpha":
            let alpha = try option.nonNegativeNumber(option.onlyArgument())
            guard alpha <= 1 else { throw option.invalid("\(DecimalText.format(alpha)) is outside 0...1") }
            backgroundAlpha = alpha
        case "blur": blur = try option.nonNegativeNumber(option.onlyArgument())
        case "sharpen": sharpen = try option.nonNegativeNumber(option.onlyArgument())
        case "pixelate": pixelate = try option.count(option.onlyArgument())
        case "brightness":
            brightness = try option.integer(option.onlyArgument())
            guard (-255...255).contains(brightness) else { throw option.invalid("\(brightness) is outside -255...255") }
        case "contrast": contrast = try option.nonNegativeNumber(option.onlyArgument())
        case "saturation": saturation = try option.nonNegativeNumber(option.onlyArgument())
        case "adjust":
            try option.atMost(3)
            if let value = try option.integerIfGiven(0) {
                guard (-255...255).contains(value) else { throw option.invalid("brightness \(value) is outside -255...255") }
                brightness = value
            }
            contrast = try option.nonNegative(1) ?? contrast
            saturation = try option.nonNegative(2) ?? saturation
        case "watermark":
            try option.atMost(5)
            guard let opacity = try option.number(0), (0...1).contains(opacity) else {
                throw option.invalid("opacity \(option.quoted(0)) is not a number in 0...1")
            }
            watermark.opacity = opacity
            if let text = option.given(1) {
                if text == "re" {
                    watermark.position = nil
                } else if let anchor = Gravity.Anchor(rawValue: text) {
                    watermark.position = anchor
                } else {
                    throw option.invalid("position \(option.quoted(1)) is not ce, no, so, ea, we, noea, nowe, soea, sowe or re")
                }
            }
            watermark.offsetX = try option.number(2) ?? watermark.offsetX
            watermark.offsetY = try option.number(3) ?? watermark.offsetY
            if option.given(4) != nil { watermark.scale = try option.positive(4) }
        default:
            throw option.invalid("is not an imgproxy option")
        }
    }

    /// `size`'s arguments (also `resize`'s after its type): width, height, enlarge, then `extend`'s.
    private mutating func applySize(_ option: ImgproxyArguments) throws(ServeRequestError) {
        width = try option.countIfGiven(0) ?? width
        height = try option.countIfGiven(1) ?? height
        enlarge = try option.optionalBool(2) ?? enlarge
        if option.arguments.count > 3 { try apply(extension: &extend, option.dropping(3)) }
    }

    /// `extend`'s arguments: enabled, then a gravity (not `sm`).
    private func apply(extension target: inout Extension, _ option: ImgproxyArguments) throws(ServeRequestError) {
        target.enabled = try option.optionalBool(0) ?? target.enabled
        if option.arguments.count > 1 { target.gravity = try option.gravity(from: 1, current: target.gravity, allowsSmart: false) }
    }
}

/// One imgproxy option's arguments, with typed readers whose errors name the option, the argument and what it should
/// be. Readers of optional arguments answer nil for a missing or empty one.
struct ImgproxyArguments {
    let name: String
    let arguments: [String]
    /// The whole segment, quoted in error messages.
    var segment: String

    init(name: String, arguments: [String], segment: String? = nil) {
        self.name = name
        self.arguments = arguments
        self.segment = segment ?? ([name] + arguments).joined(separator: ":")
    }

    func dropping(_ count: Int) -> ImgproxyArguments {
        ImgproxyArguments(name: name, arguments: Array(arguments.dropFirst(count)), segment: segment)
    }

    func invalid(_ problem: String) -> ServeRequestError {
        .badRequest("option \(ServeRequestError.quoted(segment)) (\(name)): \(problem)")
    }

    func quoted(_ index: Int) -> String { ServeRequestError.quoted(index < arguments.count ? arguments[index] : "") }

    /// The argument at `index` when given and not empty.
    func given(_ index: Int) -> String? {
        index < arguments.count && !arguments[index].isEmpty ? arguments[index] : nil
    }

    func atMost(_ count: Int) throws(ServeRequestError) {
        guard arguments.count <= count else { throw invalid("takes at most \(count) arguments, not \(arguments.count)") }
    }

    /// The one argument of a single-value option.
    func onlyArgument() throws(ServeRequestError) -> String {
        guard arguments.count == 1, let text = given(0) else { throw invalid("takes one value") }
        return text
    }

    func count(_ text: String) throws(ServeRequestError) -> Int {
        guard let value = Int(text), value >= 0 else { throw invalid("\(ServeRequestError.quoted(text)) is not a whole number ≥ 0") }
        return value
    }

    func integer(_ text: String) throws(ServeRequestError) -> Int {
        guard let value = Int(text) else { throw invalid("\(ServeRequestError.quoted(text)) is not a whole number") }
        return value
    }

    func positiveNumber(_ text: String) throws(ServeRequestError) -> Double {
        guard let value = Double(text), value.isFinite, value > 0 else { throw invalid("\(ServeRequestError.quoted(text)) is not a number > 0") }
        return value
    }

    func nonNegativeNumber(_ text: String) throws(ServeRequestError) -> Double {
        guard let value = Double(text), value.isFinite, value >= 0 else { throw invalid("\(ServeRequestError.quoted(text)) is not a number ≥ 0") }
        return value
    }

    func countIfGiven(_ index: Int) throws(ServeRequestError) -> Int? {
        try given(index).map { text throws(ServeRequestError) in try count(text) }
    }

    func integerIfGiven(_ index: Int) throws(ServeRequestError) -> Int? {
        try given(index).map { text throws(ServeRequestError) in try integer(text) }
    }

    func number(_ index: Int) throws(ServeRequestError) -> Double? {
        guard let text = given(index) else { return nil }
        guard let value = Double(text), value.isFinite else { throw invalid("\(ServeRequestError.quoted(text)) is not a number") }
        return value
    }

    func nonNegative(_ index: Int) throws(ServeRequestError) -> Double? {
        try given(index).map { text throws(ServeRequestError) in try nonNegativeNumber(text) }
    }

    func positive(_ index: Int) throws(ServeRequestError) -> Double? {
        try given(index).map { text throws(ServeRequestError) in try positiveNumber(text) }
    }

    /// A boolean in any of the spellings imgproxy's (Go's) parser takes, Python's `True`/`False` among them.
    func bool(_ text: String) throws(ServeRequestError) -> Bool {
        switch text {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default: throw invalid("\(ServeRequestError.quoted(text)) is not a boolean (1, 0, true, false, t, f)")
        }
    }

    func optionalBool(_ index: Int) throws(ServeRequestError) -> Bool? {
        try given(index).map { text throws(ServeRequestError) in try bool(text) }
    }

    func resizingType(_ index: Int) throws(ServeRequestError) -> ImgproxyOptions.ResizingType? {
        guard let text = given(index) else { return nil }
        guard let type = ImgproxyOptions.ResizingType(rawValue: text) else {
            throw invalid("resizing type \(ServeRequestError.quoted(text)) is not fit, fill, fill-down, force or auto")
        }
        return type
    }

    /// A 3- or 6-digit hex colour (imgproxy's `bg`, `trim`), opaque.
    func color(_ index: Int) throws(ServeRequestError) -> RGBAColor? {
        guard let text = given(index) else { return nil }
        guard text.count == 3 || text.count == 6, let color = RGBAColor(hexDigits: Substring(text), allowingShorthand: true) else {
            throw invalid("colour \(ServeRequestError.quoted(text)) is not RGB or RRGGBB hex")
        }
        return color
    }

    func channel(_ index: Int) throws(ServeRequestError) -> UInt8 {
        guard let text = given(index), let value = UInt8(text) else { throw invalid("\(quoted(index)) is not a channel value 0...255") }
        return value
    }

    /// A gravity from the argument at `start` on: a type, then offsets (omitted ones keep `current`'s), `fp:X:Y` or `sm`.
    func gravity(from start: Int, current: Gravity, allowsSmart: Bool) throws(ServeRequestError) -> Gravity {
        let rest = Array(arguments.dropFirst(start))
        guard let type = rest.first, !type.isEmpty else { return current }
        switch type {
        case "sm":
            guard allowsSmart else { throw invalid("gravity sm is not allowed here") }
            guard rest.count == 1 else { throw invalid("gravity sm takes no offsets") }
            return Gravity(.smart)
        case "fp":
            guard rest.count == 3, let x = Double(rest[1]), let y = Double(rest[2]), (0...1).contains(x), (0...1).contains(y) else {
                throw invalid("gravity fp takes x and y, each a number in 0...1")
            }
            return Gravity(.focusPoint(x: x, y: y))
        default:
            guard let anchor = Gravity.Anchor(rawValue: type) else {
                throw invalid("gravity \(ServeRequestError.quoted(type)) is not ce, no, so, ea, we, noea, nowe, soea, sowe, fp or sm")
            }
            guard rest.count <= 3 else { throw invalid("gravity takes a type and at most two offsets") }
            let offsets = ImgproxyArguments(name: name, arguments: rest, segment: segment)
            var result = current
            if case .anchor = current.kind {} else { (result.offsetX, result.offsetY) = (0, 0) }
            result.kind = .anchor(anchor)
            result.offsetX = try offsets.number(1) ?? result.offsetX
            result.offsetY = try offsets.number(2) ?? result.offsetY
            return result
        }
    }
}
