import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How the server writes a result, as the pipeline's serializing stage (``ImageManager/serializeImage(_:with:original:)``):
/// `format` with `options`, and with `maxBytes` above 0 imgproxy's search for a lossy format: the quality is lowered
/// until the result fits or reaches 10, each step taking a quarter, a half or three quarters of it (by how far over
/// the limit the last try was), and at least one less. Lossless formats are written once.
struct ResultSerializer: CacheSerializer {
    let format: ImageFormat
    let options: ImageEncodingOptions
    let maxBytes: Int
    var registry: ImageCoderRegistry = .shared

    func data(with image: Image, original: Data?) throws -> Data {
        try data(with: image, original: original, isCancelled: { false })
    }

    func data(with image: Image, original: Data?, isCancelled: @escaping @Sendable () -> Bool) throws -> Data {
        var encoding = options
        var data = try registry.encode(image, as: format, options: encoding, isCancelled: isCancelled)
        guard maxBytes > 0, format.traits.isLossy, !encoding.lossless else { return data }
        while data.count > maxBytes && encoding.quality > 10 {
            let overshoot = Double(data.count) / Double(maxBytes)
            let factor = overshoot > 3 ? 0.25 : overshoot > 1.5 ? 0.5 : 0.75
            encoding.quality = max(1, min(encoding.quality - 1, Int((Double(encoding.quality) * factor).rounded())))
            data = try registry.encode(image, as: format, options: encoding, isCancelled: isCancelled)
        }
        return data
    }

    func image(with data: Data, options: ImageDecodingOptions) throws -> Image {
        try registry.decode(data, options: options)
    }
}
