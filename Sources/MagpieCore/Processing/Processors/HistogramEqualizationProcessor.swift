/// Histogram equalisation per colour channel (thumbor's `equalize`): each of red, green and blue is remapped through
/// its own cumulative histogram, `(cdf(v) − cdf_min) / (pixels − cdf_min) × 255` truncated, so its values spread over
/// 0...255 about evenly; alpha is kept, and a channel holding a single value is left as it is. Each frame is
/// equalised on its own histogram. Text form: `equalize`.
public struct HistogramEqualizationProcessor: ImageProcessor {
    /// Creates the processor.
    public init() {}

    /// The text form, `equalize`.
    public var identifier: String { "equalize" }

    /// The equalised image.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        try processImage(item, context: context) { image in
            try image.mapFrames { frame in
                let tables = Self.tables(frame)
                return try ChannelLookup.apply(frame, red: tables[0], green: tables[1], blue: tables[2])
            }
        }
    }

    /// The red, green and blue lookup tables that equalise `pixels`.
    static func tables(_ pixels: PixelBuffer) -> [[UInt8]] {
        var histograms = [[Int]](repeating: [Int](repeating: 0, count: 256), count: 3)
        pixels.withUnsafeBytes { bytes in
            var index = 0
            while index < bytes.count {
                histograms[0][Int(bytes[index])] += 1
                histograms[1][Int(bytes[index + 1])] += 1
                histograms[2][Int(bytes[index + 2])] += 1
                index += 4
            }
        }
        let area = pixels.width * pixels.height
        return histograms.map { histogram in
            guard let lowest = histogram.firstIndex(where: { $0 > 0 }), histogram[lowest] < area else { return ChannelLookup.identity }
            let minimum = histogram[lowest]
            var cumulative = 0
            return histogram.map { count in
                cumulative += count
                return UInt8(Double(max(0, cumulative - minimum)) / Double(area - minimum) * 255)
            }
        }
    }
}
