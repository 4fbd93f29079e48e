import Foundation

/// GIF coder (giflib). Placeholder until the GIF implementation lands in this same file.
public struct GIFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}
    public var format: ImageFormat { .gif }
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        throw MagpieError.decodingFailed(reason: .unsupportedFormat(.gif, detail: "not built yet"))
    }
}
