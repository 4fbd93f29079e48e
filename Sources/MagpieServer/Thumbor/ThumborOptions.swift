import Magpie

/// A thumbor URL's geometry and filters, read by thumbor's grammar
/// (`[meta/][trim[:top-left|bottom-right][:TOL]/][AxB:CxD/][adaptive-][full-]fit-in/[-]Wx[-]H/[HALIGN/][VALIGN/][smart/]`
/// `[filters:NAME(ARGS):…/]IMAGE`): what ``ThumborProcessor`` runs and what the server's output options take. With
/// `meta/` the server answers thumbor's JSON description of the same work instead of the image.
public struct ThumborOptions: Sendable, Hashable {
    /// A requested side: a number of pixels (0 for "from the other side"), or `orig`, the source's.
    public enum Side: Sendable, Hashable {
        /// Pixels; 0 keeps the aspect ratio from the other side.
        case pixels(Int)
        /// The source's own size on this side.
        case original
    }

    /// How the size is reached.
    public enum FitMode: String, Sendable, Hashable {
        /// Crop to fill the box, then resize (thumbor's default).
        case crop
        /// `fit-in`: fit inside the box, never enlarged.
        case fitIn = "fit-in"
        /// `adaptive-fit-in`: `fit-in`, the box turned to the image's orientation.
        case adaptiveFitIn = "adaptive-fit-in"
        /// `full-fit-in`: the smaller side fits, so the image covers the box (not cropped).
        case fullFitIn = "full-fit-in"
        /// `adaptive-full-fit-in`.
        case adaptiveFullFitIn = "adaptive-full-fit-in"
    }

    /// The reference pixel for `trim`.
    public enum TrimReference: String, Sendable, Hashable {
        /// The top-left pixel's colour is the border's (the default).
        case topLeft = "top-left"
        /// The bottom-right pixel's.
        case bottomRight = "bottom-right"
    }

    /// A manual crop in source pixels: left, top, right, bottom.
    public struct Box: Sendable, Hashable {
        /// Left edge.
        public var left: Int
        /// Top edge.
        public var top: Int
        /// Right edge (exclusive).
        public var right: Int
        /// Bottom edge (exclusive).
        public var bottom: Int

        /// The box from its edges.
        public init(left: Int, top: Int, right: Int, bottom: Int) {
            (self.left, self.top, self.right, self.bottom) = (left, top, right, bottom)
        }
    }

    /// `meta/`: answer thumbor's JSON description (source, operations, target, focal points), not the image.
    public var meta = false
    /// `trim`: the pixel whose colour is the border's; nil for no trim.
    public var trimReference: TrimReference?
    /// `trim`'s colour tolerance (0 for the exact colour).
    public var trimTolerance = 0
    /// `AxB:CxD`: a manual crop; nil for none.
    public var crop: Box?
    /// How the size is reached.
    public var fitMode = FitMode.crop
    /// The requested width.
    public var width = Side.pixels(0)
    /// The requested height.
    public var height = Side.pixels(0)
    /// `-W`: mirror left and right.
    public var flipHorizontal = false
    /// `-H`: mirror top and bottom.
    public var flipVertical = false
    /// `left`, `center`, `right`: where a crop keeps the image (0, 0.5, 1).
    public var horizontalAlignment = 0.5
    /// `top`, `middle`, `bottom`.
    public var verticalAlignment = 0.5
    /// `smart/`: the crop follows what a detector or attention finds.
    public var smart = false
    /// The filters in URL order, each checked (``ThumborFilter``).
    public var filters: [ThumborFilter] = []

    /// The defaults: `unsafe/IMAGE`.
    public init() {}

    /// Whether any filter of this name is present.
    func has(_ name: String) -> Bool { filters.contains { $0.name == name } }

    /// The regions of `focal(…)` (and of a resolved `extract_focal()`), in source pixels, in URL order.
    var focalBoxes: [Box] {
        filters.compactMap { if case .focal(let box) = $0 { box } else { nil } }
    }

    /// The watermarks' URLs, in URL order, each once.
    public var watermarkURLs: [String] {
        var urls: [String] = []
        for case .watermark(let mark) in filters where !urls.contains(mark.url) { urls.append(mark.url) }
        return urls
    }

    /// `max_age(N)`: the last one's seconds, nil without one.
    public var maxAge: Int? {
        filters.reversed().lazy.compactMap { if case .maxAge(let seconds) = $0 { seconds } else { nil } }.first
    }

    /// `autojpg()`: the last one's setting, false without one (thumbor's `AUTO_PNG_TO_JPG` is off by default).
    public var autoJPG: Bool {
        filters.reversed().lazy.compactMap { if case .autoJPG(let enabled) = $0 { enabled } else { nil } }.first ?? false
    }

    /// `thumbor;` then the geometry and the filters that change pixels or the encoder, in a fixed form: the same for
    /// every spelling of the same request (defaults written or not), different whenever the result differs.
    public var canonicalText: String {
        func side(_ side: Side) -> String {
            switch side {
            case .pixels(let value): String(value)
            case .original: "orig"
            }
        }
        var parts = [meta ? "thumbor-meta" : "thumbor"]
        if let trimReference { parts.append("trim:\(trimReference.rawValue):\(trimTolerance)") }
        if let crop { parts.append("crop:\(crop.left)x\(crop.top):\(crop.right)x\(crop.bottom)") }
        parts.append("\(fitMode.rawValue):\(flipHorizontal ? "-" : "")\(side(width))x\(flipVertical ? "-" : "")\(side(height))")
        if horizontalAlignment != 0.5 || verticalAlignment != 0.5 {
            parts.append("align:\(DecimalText.format(horizontalAlignment)):\(DecimalText.format(verticalAlignment))")
        }
        if smart { parts.append("smart") }
        parts += filters.compactMap(\.canonicalText)
        return parts.joined(separator: ";")
    }
}
