/// Where a box goes inside another (a crop inside an image, an image on a larger canvas, a watermark on an image),
/// with imgproxy's meaning: a compass anchor with offsets, a focus point, or the most interesting place.
public struct Gravity: Sendable, Hashable {
    /// The compass anchors: the centre, an edge's middle or a corner.
    public enum Anchor: String, Sendable, Hashable, CaseIterable {
        /// The middle.
        case center = "ce"
        /// The middle of the top edge.
        case north = "no"
        /// The middle of the bottom edge.
        case south = "so"
        /// The middle of the right edge.
        case east = "ea"
        /// The middle of the left edge.
        case west = "we"
        /// The top-right corner.
        case northEast = "noea"
        /// The top-left corner.
        case northWest = "nowe"
        /// The bottom-right corner.
        case southEast = "soea"
        /// The bottom-left corner.
        case southWest = "sowe"
    }

    /// What the gravity follows.
    public enum Kind: Sendable, Hashable {
        /// A compass anchor, moved by the offsets.
        case anchor(Anchor)
        /// The inner box is centred on this point, given as fractions of the outer box (0 left or top, 1 right or
        /// bottom), then kept inside it.
        case focusPoint(x: Double, y: Double)
        /// The inner box goes where the image is most interesting (``SmartCropping``); placed like a focus point once
        /// that is found.
        case smart
    }

    /// What the gravity follows.
    public var kind: Kind
    /// Horizontal offset for an anchor: pixels when its magnitude is 1 or more (times the placement's offset scale),
    /// else a fraction of the outer width. Positive moves inward from a west or east edge, right from the centre.
    public var offsetX: Double
    /// Vertical offset for an anchor: as ``offsetX``, along the height; positive moves inward from a north or south
    /// edge, down from the centre.
    public var offsetY: Double

    /// A gravity of `kind` with the given offsets (default none).
    ///
    /// - Parameters:
    ///   - kind: What the gravity follows.
    ///   - offsetX: Horizontal offset (pixels when |x| ≥ 1, else a fraction of the outer width).
    ///   - offsetY: Vertical offset (pixels when |y| ≥ 1, else a fraction of the outer height).
    public init(_ kind: Kind, offsetX: Double = 0, offsetY: Double = 0) {
        self.kind = kind
        self.offsetX = offsetX
        self.offsetY = offsetY
    }

    /// The centre, no offsets.
    public static let center = Gravity(.anchor(.center))

    /// The top-left corner of a box of `inner` size placed in a box of `outer` size.
    ///
    /// Offsets in pixels are multiplied by `offsetScale` (a device-pixel ratio). A ``Kind/smart`` gravity is placed at
    /// the centre: find its focus point first (``SmartCropping``) and place that. With `allowOverflow`, the inner box may
    /// hang over the outer one's edges as long as one pixel of it stays inside (a watermark); without, it is kept
    /// inside (a crop, a canvas).
    ///
    /// - Parameters:
    ///   - outer: The box placed into.
    ///   - inner: The box placed.
    ///   - offsetScale: What pixel offsets are multiplied by (default 1).
    ///   - allowOverflow: Whether the inner box may cross the outer one's edges.
    /// - Returns: The inner box's top-left corner in the outer box's coordinates.
    public func placement(outer: PixelSize, inner: PixelSize, offsetScale: Double = 1, allowOverflow: Bool = false) -> (x: Int, y: Int) {
        var left: Int, top: Int
        switch kind {
        case .focusPoint(let x, let y):
            left = Self.roundEven(Double(outer.width) * x) - inner.width / 2
            top = Self.roundEven(Double(outer.height) * y) - inner.height / 2
        case .anchor, .smart:
            let anchor: Anchor
            if case .anchor(let given) = kind { anchor = given } else { anchor = .center }
            let dx = Self.offset(offsetX, along: outer.width, scale: offsetScale)
            let dy = Self.offset(offsetY, along: outer.height, scale: offsetScale)
            left = Self.roundEven(Double(outer.width - inner.width + 1) / 2) + dx
            top = Self.roundEven(Double(outer.height - inner.height + 1) / 2) + dy
            switch anchor {
            case .north, .northEast, .northWest: top = dy
            case .south, .southEast, .southWest: top = outer.height - inner.height - dy
            default: break
            }
            switch anchor {
            case .west, .northWest, .southWest: left = dx
            case .east, .northEast, .southEast: left = outer.width - inner.width - dx
            default: break
            }
        }
        if allowOverflow {
            left = min(max(left, -inner.width + 1), outer.width - 1)
            top = min(max(top, -inner.height + 1), outer.height - 1)
        } else {
            left = min(max(left, 0), max(0, outer.width - inner.width))
            top = min(max(top, 0), max(0, outer.height - inner.height))
        }
        return (left, top)
    }

    /// An offset in pixels: `value × scale` when |value| ≥ 1, else `value` of `length`.
    package static func offset(_ value: Double, along length: Int, scale: Double) -> Int {
        abs(value) >= 1 ? roundEven(value * scale) : roundEven(Double(length) * value)
    }

    /// Rounds half to even, as imgproxy's placements do.
    package static func roundEven(_ value: Double) -> Int {
        Int(value.rounded(.toNearestOrEven))
    }
}

extension Gravity {
    /// The text form: the anchor's name (`ce`, `noea`, …) followed by `:X:Y` when an offset is not 0, `fp:X:Y`, or
    /// `sm`; ``init(specText:)`` reads it back.
    public var specText: String {
        switch kind {
        case .anchor(let anchor):
            offsetX == 0 && offsetY == 0
                ? anchor.rawValue : "\(anchor.rawValue):\(DecimalText.format(offsetX)):\(DecimalText.format(offsetY))"
        case .focusPoint(let x, let y): "fp:\(DecimalText.format(x)):\(DecimalText.format(y))"
        case .smart: "sm"
        }
    }

    /// The gravity a text form names: an anchor name with up to two offsets, `fp:X:Y` (each within 0...1), or `sm`;
    /// nil for anything else.
    public init?(specText text: String) {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard let name = fields.first?.lowercased() else { return nil }
        let numbers = fields.dropFirst().map { Double($0) }
        guard numbers.allSatisfy({ $0?.isFinite == true }) else { return nil }
        let values = numbers.compactMap { $0 }
        switch name {
        case "sm":
            guard values.isEmpty else { return nil }
            self.init(.smart)
        case "fp":
            guard values.count == 2, (0...1).contains(values[0]), (0...1).contains(values[1]) else { return nil }
            self.init(.focusPoint(x: values[0], y: values[1]))
        default:
            guard let anchor = Anchor(rawValue: name), values.count <= 2 else { return nil }
            self.init(.anchor(anchor), offsetX: values.first ?? 0, offsetY: values.count > 1 ? values[1] : 0)
        }
    }
}
