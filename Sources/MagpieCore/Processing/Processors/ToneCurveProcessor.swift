/// Tone curves, as in photo editors' Curves tool and thumbor's `curve`: each curve is a natural cubic spline through
/// control points (input → output, both 0...255), flat before its first point and after its last. The red, green and
/// blue curves are applied first, each to its channel, then the curve for all channels; alpha is kept. An empty curve
/// changes nothing. Text form: `curves:ALL;RED;GREEN;BLUE`, each curve its points as `x,y` joined by spaces, for
/// example `curves:0,0 128,160 255,255;;;`.
public struct ToneCurveProcessor: ImageProcessor {
    /// One control point of a curve.
    public struct Point: Sendable, Hashable {
        /// The input value, 0...255.
        public var x: UInt8
        /// The output value, 0...255.
        public var y: UInt8

        /// The point mapping `x` to `y`.
        public init(x: UInt8, y: UInt8) {
            self.x = x
            self.y = y
        }
    }

    /// The curve for all three colour channels, applied last; empty for none.
    public let all: [Point]
    /// The red channel's curve; empty for none.
    public let red: [Point]
    /// The green channel's curve; empty for none.
    public let green: [Point]
    /// The blue channel's curve; empty for none.
    public let blue: [Point]

    /// A processor applying the curves; the points of each must have strictly increasing `x` (checked when processing).
    ///
    /// - Parameters:
    ///   - all: The curve for every colour channel, applied after the channels' own.
    ///   - red: The red channel's curve.
    ///   - green: The green channel's curve.
    ///   - blue: The blue channel's curve.
    public init(all: [Point], red: [Point] = [], green: [Point] = [], blue: [Point] = []) {
        self.all = all
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// The text form, `curves:ALL;RED;GREEN;BLUE`.
    public var identifier: String {
        "curves:" + [all, red, green, blue].map { $0.map { "\($0.x),\($0.y)" }.joined(separator: " ") }.joined(separator: ";")
    }

    /// The image through the curves, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)`` for a curve whose inputs do not
    ///   increase; ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        for curve in [all, red, green, blue] where zip(curve, curve.dropFirst()).contains(where: { $0.x >= $1.x }) {
            throw MagpieError.processingFailed(
                reason: .invalidParameter(processor: identifier, message: "the points of a curve must have increasing inputs"))
        }
        let common = Self.table(all)
        let tables = [red, green, blue].map { Self.table($0).map { common[Int($0)] } }
        return try processImage(item, context: context) { image in
            guard tables.contains(where: { $0 != ChannelLookup.identity }) else { return image }
            return try image.mapFrames { try ChannelLookup.apply($0, red: tables[0], green: tables[1], blue: tables[2]) }
        }
    }

    /// The 256 outputs of `points`' natural cubic spline, rounded and clamped; the identity for no points.
    static func table(_ points: [Point]) -> [UInt8] {
        guard let first = points.first, let last = points.last else { return ChannelLookup.identity }
        let x = points.map { Double($0.x) }, y = points.map { Double($0.y) }
        let n = points.count
        // Second derivatives: a tridiagonal system with zero curvature at both ends (a natural spline).
        var secondDerivative = [Double](repeating: 0, count: n)
        if n > 2 {
            var diagonal = [Double](repeating: 1, count: n), upper = [Double](repeating: 0, count: n)
            var rhs = [Double](repeating: 0, count: n)
            for i in 1..<(n - 1) {
                let lower = (x[i] - x[i - 1]) / 6
                diagonal[i] = (x[i + 1] - x[i - 1]) / 3
                upper[i] = (x[i + 1] - x[i]) / 6
                rhs[i] = (y[i + 1] - y[i]) / (x[i + 1] - x[i]) - (y[i] - y[i - 1]) / (x[i] - x[i - 1])
                // Forward elimination (the row above has already been reduced).
                let factor = lower / diagonal[i - 1]
                diagonal[i] -= factor * upper[i - 1]
                rhs[i] -= factor * rhs[i - 1]
            }
            for i in stride(from: n - 2, through: 1, by: -1) {
                secondDerivative[i] = (rhs[i] - upper[i] * secondDerivative[i + 1]) / diagonal[i]
            }
        }
        var table = [UInt8](repeating: first.y, count: 256)
        for i in 0..<(n - 1) {
            let h = x[i + 1] - x[i]
            for value in Int(points[i].x)..<Int(points[i + 1].x) {
                let b = (Double(value) - x[i]) / h, a = 1 - b
                let output = a * y[i] + b * y[i + 1]
                    + h * h / 6 * ((a * a * a - a) * secondDerivative[i] + (b * b * b - b) * secondDerivative[i + 1])
                table[value] = UInt8(min(max(output.rounded(), 0), 255))
            }
        }
        for value in Int(last.x)...255 { table[value] = last.y }
        return table
    }
}
