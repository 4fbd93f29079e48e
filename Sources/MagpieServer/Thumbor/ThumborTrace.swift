import Magpie

/// What a ``ThumborProcessor`` run did, as thumbor's JSON engine records it for `meta/`: the crops, resizes and flips
/// of the transformation (not the filters'), and the focal points the automatic crop used. The image and the JSON come
/// from the same run, so they cannot disagree.
public struct ThumborTrace: Sendable, Equatable {
    /// A number as thumbor's Python writes it: its resizes take floats (`300.0`) where the arithmetic made one.
    public enum Number: Sendable, Equatable {
        /// A whole number, written `300`.
        case int(Int)
        /// A float, written `300.0` when whole.
        case float(Double)

        /// The value, truncated as thumbor's engine does when it resizes.
        public var value: Int {
            switch self {
            case .int(let value): value
            case .float(let value): Int(value)
            }
        }
    }

    /// One step of the transformation.
    public enum Operation: Sendable, Equatable {
        /// Keeps `left..<right` × `top..<bottom`.
        case crop(left: Int, top: Int, right: Int, bottom: Int)
        /// Resizes to `width` × `height`.
        case resize(width: Number, height: Number)
        /// Mirrors left and right.
        case flipHorizontally
        /// Mirrors top and bottom.
        case flipVertically
    }

    /// A focal point, in the pixels of the image after the manual crop.
    public struct FocalPoint: Sendable, Equatable {
        /// Across.
        public var x: Int
        /// Down.
        public var y: Int
        /// Its weight (`z` in thumbor's JSON): the region's area, or 1 for an alignment's point.
        public var weight: Number
        /// The region's width (1 for a point).
        public var width: Int
        /// The region's height (1 for a point).
        public var height: Int
        /// `alignment`, `Explicit` (a `focal()` region) or `detection` (`smart`).
        public var origin: String
    }

    /// The operations in order.
    public var operations: [Operation] = []
    /// The focal points.
    public var focalPoints: [FocalPoint] = []

    /// thumbor's `target`: the size the last crop or resize made, else `size`.
    func target(orSize size: PixelSize) -> (width: Number, height: Number) {
        var target = (width: Number.int(size.width), height: Number.int(size.height))
        for operation in operations {
            switch operation {
            case .crop(let left, let top, let right, let bottom): target = (.int(right - left), .int(bottom - top))
            case .resize(let width, let height): target = (width, height)
            case .flipHorizontally, .flipVertically: break
            }
        }
        return target
    }
}
