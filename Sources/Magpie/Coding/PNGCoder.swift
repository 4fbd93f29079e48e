import Foundation
public struct PNGCoder: ImageCoder {
    public init() {}
    public var format: ImageFormat { .png }
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        throw MagpieError.decodingFailed(reason: .unsupportedFormat(.png, detail: "not built yet"))
    }
}
