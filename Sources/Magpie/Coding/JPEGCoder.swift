import Foundation
public struct JPEGCoder: ImageCoder {
    public init() {}
    public var format: ImageFormat { .jpeg }
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        throw MagpieError.decodingFailed(reason: .unsupportedFormat(.jpeg, detail: "not built yet"))
    }
}
