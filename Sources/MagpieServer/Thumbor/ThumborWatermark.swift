import Magpie

/// thumbor's `watermark(URL,X,Y,ALPHA[,W_RATIO,H_RATIO])` checked: where the image at URL goes, how transparent it is
/// made and how large, with thumbor's arithmetic (`thumbor/filters/watermark.py`): copies placed by whole pixels,
/// repeated copies spread over the image, the size fitted into the ratios of the image's.
public struct ThumborWatermark: Sendable, Hashable {
    /// Where the watermark goes along one axis.
    public enum Position: Sendable, Hashable {
        /// `N` pixels from the near edge, or with `-N` from the far edge (the watermark's far side N pixels in).
        case pixels(Int, fromFarEdge: Bool)
        /// `Np` (or `-Np`): N % of the image's side, then as ``pixels(_:fromFarEdge:)``.
        case percent(Int, fromFarEdge: Bool)
        /// `center`.
        case center
        /// `repeat`: copies side by side across the image.
        case `repeat`

        init?(_ text: String) {
            switch text {
            case "center": self = .center
            case "repeat": self = .repeat
            default:
                let fromFarEdge = text.hasPrefix("-")
                var digits = fromFarEdge ? text.dropFirst() : Substring(text)
                let percent = digits.hasSuffix("p")
                if percent { digits = digits.dropLast() }
                guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else {
                    return nil
                }
                self = percent ? .percent(value, fromFarEdge: fromFarEdge) : .pixels(value, fromFarEdge: fromFarEdge)
            }
        }

        var text: String {
            switch self {
            case .pixels(let value, let far): (far ? "-" : "") + String(value)
            case .percent(let value, let far): (far ? "-" : "") + String(value) + "p"
            case .center: "center"
            case .repeat: "repeat"
            }
        }
    }

    /// The watermark image's URL, as written in the filter (percent-decoded once with the rest of the path).
    public var url: String
    /// Across.
    public var x: Position
    /// Down.
    public var y: Position
    /// Transparency in %: 0 keeps the watermark's own alpha, 100 makes it invisible (thumbor subtracts
    /// `255 × ALPHA / 100` from every alpha value).
    public var alpha: Int
    /// The watermark fits within this fraction of the image's width (0 < ratio ≤ 1); nil for no limit.
    public var widthRatio: Double?
    /// The watermark fits within this fraction of the image's height; nil for no limit.
    public var heightRatio: Double?

    /// The filter's arguments, or nil when thumbor's pattern would not take them.
    init?(arguments: [String]) {
        guard (4...6).contains(arguments.count), !arguments[0].isEmpty, let x = Position(arguments[1]), let y = Position(arguments[2]),
            arguments[3].count <= 9, arguments[3].allSatisfy({ $0.isASCII && $0.isNumber }), let alpha = Int(arguments[3]), alpha <= 100
        else { return nil }
        func ratio(_ index: Int) -> Double?? {
            guard index < arguments.count, arguments[index] != "none" else { return .some(nil) }
            guard let percent = Int(arguments[index]), (0...100).contains(percent) else { return nil }
            return .some(percent == 0 ? nil : Double(percent) / 100)  // 0 is "no limit" in thumbor (a false value)
        }
        guard let widthRatio = ratio(4), let heightRatio = ratio(5) else { return nil }
        (self.url, self.x, self.y, self.alpha, self.widthRatio, self.heightRatio) = (arguments[0], x, y, alpha, widthRatio, heightRatio)
    }

    /// `URL:X:Y:ALPHA:W:H` for cache keys (the URL last-but-one part would be ambiguous: it goes last).
    var canonicalText: String {
        func ratio(_ value: Double?) -> String { value.map { DecimalText.format($0) } ?? "none" }
        return "\(x.text):\(y.text):\(alpha):\(ratio(widthRatio)):\(ratio(heightRatio)):\(url)"
    }

    /// The watermark's size on an image of `image`'s: its own, or fitted into the ratios (thumbor's
    /// `calc_watermark_size`, Python's rounding).
    func size(image: PixelSize, mark: PixelSize) -> PixelSize {
        guard widthRatio != nil || heightRatio != nil else { return mark }
        let markWidth = Double(mark.width), markHeight = Double(mark.height)
        var maxWidth = widthRatio.map { Double(image.width) * $0 }
        var maxHeight = heightRatio.map { Double(image.height) * $0 }
        if maxWidth == nil, let maxHeight { maxWidth = markWidth * maxHeight / markHeight }
        if maxHeight == nil, let maxWidth { maxHeight = markHeight * maxWidth / markWidth }
        let boxWidth = maxWidth ?? markWidth, boxHeight = maxHeight ?? markHeight
        let width: Double, height: Double
        if markWidth / boxWidth >= markHeight / boxHeight {
            (width, height) = (boxWidth.rounded(.toNearestOrEven), (markHeight * boxWidth / markWidth).rounded(.toNearestOrEven))
        } else {
            (width, height) = ((markWidth * boxHeight / markHeight).rounded(.toNearestOrEven), boxHeight.rounded(.toNearestOrEven))
        }
        return PixelSize(width: max(1, Int(width)), height: max(1, Int(height)))
    }

    /// The top-left corners of the copies on an image of `image`'s size, for a watermark of `mark`'s.
    func origins(image: PixelSize, mark: PixelSize) -> [(x: Int, y: Int)] {
        func along(_ position: Position, _ length: Int, _ side: Int) -> [Int] {
            switch position {
            case .center:
                return [Int(Double(length - side) / 2)]
            case .pixels(let value, let far):
                return [far ? length - side - value : value]
            case .percent(let value, let far):
                let pixels = Int((Double(length) * Double(value) / 100 + 1e-5).rounded(.toNearestOrEven))
                return [far ? length - side - pixels : pixels]
            case .repeat:
                var count = length / side, spare = length % side
                if Double(length) / Double(side) < 2 { (count, spare) = (Int((Double(length) / Double(side)).rounded(.up)), 10) }
                let gap = spare / (max(count, 2) - 1)
                return (0..<count).map { $0 * gap + $0 * side }
            }
        }
        var xs = along(x, image.width, mark.width), ys = along(y, image.height, mark.height)
        if x == .repeat, y == .repeat, xs.count * ys.count > 100 {
            // thumbor's cap: at most 6 × 6 copies, spread over the whole image.
            func spread(_ length: Int, _ side: Int, _ count: Int) -> [Int] {
                let copies = min(6, count), gap = (length - copies * side) / (max(copies, 2) - 1)
                return (0..<copies).map { $0 * gap + $0 * side }
            }
            xs = spread(image.width, mark.width, xs.count)
            ys = spread(image.height, mark.height, ys.count)
        }
        return xs.flatMap { x in ys.map { (x, $0) } }
    }
}
