/// Which way an image is mirrored.
public enum FlipDirection: String, Sendable {
    /// Left and right swap.
    case horizontal
    /// Top and bottom swap.
    case vertical
    /// Both at once (the same as rotating by 180 degrees).
    case both

    /// The text-form word: `h`, `v` or `hv`.
    var specName: String {
        switch self {
        case .horizontal: "h"
        case .vertical: "v"
        case .both: "hv"
        }
    }

    /// Parses `h`, `v`, `hv` (or `vh`, or the case names); nil when unknown.
    init?(specName: String) {
        switch specName.lowercased() {
        case "h", "horizontal": self = .horizontal
        case "v", "vertical": self = .vertical
        case "hv", "vh", "both": self = .both
        default: return nil
        }
    }
}

/// Mirrors images horizontally, vertically or both. Text form: `flip:h|v|hv`.
public struct FlipImageProcessor: ImageProcessor {
    /// Which way images are mirrored.
    public let direction: FlipDirection

    /// A processor mirroring in `direction`.
    ///
    /// - Parameter direction: Horizontal, vertical or both.
    public init(_ direction: FlipDirection) {
        self.direction = direction
    }

    /// The text form, `flip:h`, `flip:v` or `flip:hv`; ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String { "flip:\(direction.specName)" }

    /// The mirrored image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        try processImage(item, context: context) { image in
            try image.mapFrames { try Self.flip($0, direction) }
        }
    }

    static func flip(_ pixels: PixelBuffer, _ direction: FlipDirection) throws -> PixelBuffer {
        let width = pixels.width, height = pixels.height
        var output = try PixelBuffer.uninitialized(width: width, height: height)
        pixels.withUnsafeBytes { raw in
            output.withUnsafeMutableBytes { outRaw in
                // Pixels move whole, so each is one 4-byte load and store; raw loads need no rebinding.
                let src = raw.baseAddress!, dst = outRaw.baseAddress!
                let rowBytes = width * 4
                for y in 0..<height {
                    let targetRow = direction == .horizontal ? y : height - 1 - y
                    let from = src + y * rowBytes, to = dst + targetRow * rowBytes
                    if direction == .vertical {
                        to.copyMemory(from: from, byteCount: rowBytes)
                    } else {
                        for x in 0..<width {
                            to.storeBytes(of: from.load(fromByteOffset: x * 4, as: UInt32.self),
                                          toByteOffset: (width - 1 - x) * 4, as: UInt32.self)
                        }
                    }
                }
            }
        }
        return output
    }
}
