import Foundation

/// WebP coder (libwebp). Placeholder until the WebP implementation lands in this same file.
public struct WebPCoder: ImageCoder {
    /// Creates the coder.
    public init() {}
    public var format: ImageFormat { .webp }
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        throw MagpieError.decodingFailed(reason: .unsupportedFormat(.webp, detail: "not built yet"))
    }
}
