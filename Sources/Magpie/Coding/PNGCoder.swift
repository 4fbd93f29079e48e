import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// PNG and APNG coder on libpng.
///
/// Still PNGs decode through libpng with every colour type and bit depth. Animated
/// PNGs (acTL/fcTL/fdAT) are taken apart by `APNGDecoder`, which rebuilds each
/// frame as a PNG for libpng and composites the frames; a broken animation falls
/// back to the still image. Encoding writes 8-bit RGB (opaque) or RGBA, and an
/// APNG when the image has several frames.
public struct PNGCoder: ImageCoder {
    /// zlib compression level 0...9 used when encoding. Default 6.
    public var compressionLevel: Int

    /// Creates the coder.
    public init(compressionLevel: Int = 6) {
        self.compressionLevel = compressionLevel
    }

    public var format: ImageFormat { .png }
    public var canEncode: Bool { true }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        if PNGChunks.declaresAnimation(data), let animation = try APNGDecoder(data: data).decode(options: options) {
            return animation
        }
        return Image(pixels: try Self.decodeStill(data, options: options), scale: options.scale, format: .png)
    }

    static func decodeStill(_ data: Data, options: ImageDecodingOptions) throws -> PixelBuffer {
        var limits = CodecBridge.limits(options)
        var bitmap = mg_bitmap()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: data) { mg_png_decode($0, $1, &limits, &bitmap, &error) }
        guard status == 0 else { throw CodecBridge.decodingError(error, format: .png) }
        return CodecBridge.pixels(adopting: bitmap)
    }

    public func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        guard (0...9).contains(compressionLevel) else {
            throw MagpieError.encodingFailed(reason: .invalidOption("PNG compression level \(compressionLevel) is outside 0...9"))
        }
        if image.isAnimated && !options.onlyFirstFrame {
            return try APNGEncoder(compressionLevel: compressionLevel).encode(image)
        }
        return try encodeStill(image.pixels, dropAlpha: image.pixels.isOpaque)
    }

    func encodeStill(_ pixels: PixelBuffer, dropAlpha: Bool) throws -> Data {
        var buffer = mg_buffer()
        var error = mg_error()
        let status = pixels.withUnsafeBytes { raw in
            mg_png_encode(
                raw.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(pixels.width), UInt32(pixels.height),
                dropAlpha ? 1 : 0, Int32(compressionLevel), &buffer, &error)
        }
        guard status == 0 else { throw CodecBridge.encodingError(error, format: .png) }
        return CodecBridge.data(adopting: buffer)
    }
}
