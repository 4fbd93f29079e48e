/// Adds a fixed amount to each colour channel (thumbor's `rgb`): red, green and blue each move by their own offset in
/// 8-bit steps, clamped to 0...255; alpha is kept. Text form: `offset:R:G:B`, for example `offset:51:0:-25`.
public struct ChannelOffsetProcessor: ImageProcessor {
    /// Added to red, −255...255.
    public let red: Int
    /// Added to green, −255...255.
    public let green: Int
    /// Added to blue, −255...255.
    public let blue: Int

    /// A processor adding the offsets; (0, 0, 0) leaves images unchanged. Offsets beyond ±255 act as ±255.
    ///
    /// - Parameters:
    ///   - red: Added to the red channel.
    ///   - green: Added to the green channel.
    ///   - blue: Added to the blue channel.
    public init(red: Int, green: Int, blue: Int) {
        self.red = min(max(red, -255), 255)
        self.green = min(max(green, -255), 255)
        self.blue = min(max(blue, -255), 255)
    }

    /// The text form, `offset:R:G:B`.
    public var identifier: String { "offset:\(red):\(green):\(blue)" }

    /// The shifted image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        func table(_ offset: Int) -> [UInt8] { (0...255).map { UInt8(min(max($0 + offset, 0), 255)) } }
        let (r, g, b) = (table(red), table(green), table(blue))
        return try processImage(item, context: context) { image in
            guard red != 0 || green != 0 || blue != 0 else { return image }
            return try image.mapFrames { try ChannelLookup.apply($0, red: r, green: g, blue: b) }
        }
    }
}
