/// Grain (thumbor's `noise`): every pixel gets one random amount in `−amount/2 ..< amount − amount/2` added to its
/// red, green and blue alike (so the noise is grey), clamped to 0...255; alpha is kept.
///
/// Unlike thumbor's, whose numbers come from the process's shared C `random()` (different bytes on every request unless
/// a seed is given), the numbers here come from a SplitMix64 generator started from ``seed``: the same parameters give
/// the same pixels on every run and machine, so results can be cached and compared. Every frame gets the same noise.
/// Text form: `noise:AMOUNT:SEED`.
public struct NoiseProcessor: ImageProcessor {
    /// The width of the range of the random amounts, in 8-bit steps, 0...255 (0 leaves images unchanged).
    public let amount: Int
    /// Where the generator starts.
    public let seed: UInt64

    /// A processor adding noise of `amount`, from `seed`.
    ///
    /// - Parameters:
    ///   - amount: The width of the range of the random amounts, clamped to 0...255.
    ///   - seed: Starts the generator; the same seed gives the same noise.
    public init(amount: Int, seed: UInt64 = 0) {
        self.amount = min(max(amount, 0), 255)
        self.seed = seed
    }

    /// The text form, `noise:AMOUNT:SEED`.
    public var identifier: String { "noise:\(amount):\(seed)" }

    /// The noisy image.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        try processImage(item, context: context) { image in
            guard amount > 0 else { return image }
            return image.mapFrames { frame in
                var output = frame
                var state = seed
                let amount = UInt64(self.amount), half = self.amount / 2
                output.withUnsafeMutableBytes { bytes in
                    var index = 0
                    while index < bytes.count {
                        // SplitMix64 (Steele, Lea and Flood, 2014).
                        state &+= 0x9E37_79B9_7F4A_7C15
                        var z = state
                        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                        z ^= z >> 31
                        let delta = Int(z % amount) - half
                        for channel in 0..<3 {
                            bytes[index + channel] = UInt8(min(max(Int(bytes[index + channel]) + delta, 0), 255))
                        }
                        index += 4
                    }
                }
                return output
            }
        }
    }
}
