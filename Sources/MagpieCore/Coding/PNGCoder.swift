import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// PNG and APNG coder on libpng.
///
/// Still PNGs decode through libpng with every colour type and bit depth. Animated
/// PNGs (acTL/fcTL/fdAT) are taken apart by an internal APNG decoder, which rebuilds each
/// frame as a PNG for libpng and composites the frames; a broken animation falls
/// back to the still image. Encoding writes 8-bit RGB (opaque) or RGBA, and an
/// APNG when the image has several frames.
public struct PNGCoder: ImageCoder {
    /// zlib compression level 0 (none, fastest) ... 9 (smallest) used when encoding. Default 6.
    /// A value outside 0...9 makes ``encode(_:options:)`` throw.
    public var compressionLevel: Int

    /// Creates the coder.
    ///
    /// - Parameter compressionLevel: zlib level for encoding, 0...9 (default 6); checked when encoding.
    public init(compressionLevel: Int = 6) {
        self.compressionLevel = compressionLevel
    }

    /// Always ``ImageFormat/png`` (APNG included).
    public var format: ImageFormat { .png }
    /// PNG: `image/png`, `png` (also `apng`), alpha, APNG animations written, no quality, always negotiable.
    public var traits: FormatTraits {
        FormatTraits(
            displayName: "PNG", mimeType: "image/png", fileExtensions: ["png", "apng"], supportsAlpha: true,
            animatesOnEncode: true, negotiation: .universal)
    }
    /// The 8-byte PNG signature.
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        leadingBytes.hasBytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }
    /// IHDR's size; the frame count from an `acTL` before the first IDAT (1 without one).
    public func header(of data: Data) throws -> ImageHeader { try HeaderBytes.read(data, format: .png) { $0.png() } }
    /// Always true.
    public var canEncode: Bool { true }
    /// libpng refuses to write a side over its default user limit (PNG_USER_WIDTH_MAX, PNG_USER_HEIGHT_MAX).
    public var largestEncodableSize: PixelSize? { PixelSize(width: 1_000_000, height: 1_000_000) }

    /// Decodes a PNG, or all frames of an APNG; a broken animation gives the still (default) image instead.
    ///
    /// - Parameters:
    ///   - data: A complete PNG or APNG file.
    ///   - options: Scale, first-frame-only and limits; ``ImageDecodingOptions/targetSize`` is not used.
    /// - Returns: The image with format ``ImageFormat/png``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `corruptData`, `truncatedData`, `tooLarge`
    ///   or `outOfMemory`.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        let (embedded, info) = PNGMetadataChunks.read(data)
        var image: Image
        if PNGChunks.declaresAnimation(data), let animation = try APNGDecoder(data: data).decode(options: options) {
            image = animation
        } else {
            image = Image(pixels: try Self.decodeStill(data, options: options), scale: options.scale, format: .png)
        }
        image = embedded.applied(to: image)
        image.sourceInfo = info
        return image
    }

    static func decodeStill(_ data: Data, options: ImageDecodingOptions) throws -> PixelBuffer {
        var limits = CodecBridge.limits(options)
        var bitmap = mg_bitmap()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: data) { mg_png_decode($0, $1, &limits, &bitmap, &error) }
        guard status == 0 else { throw CodecBridge.decodingError(error, format: .png) }
        return CodecBridge.pixels(adopting: bitmap)
    }

    /// Encodes `image` as 8-bit PNG (RGB when every pixel is opaque, RGBA otherwise), or as APNG
    /// when it is animated and `options.onlyFirstFrame` is false.
    ///
    /// - Parameters:
    ///   - image: The image to write.
    ///   - options: Only ``ImageEncodingOptions/onlyFirstFrame`` is used.
    /// - Returns: The PNG file's bytes.
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` with `invalidOption` when ``compressionLevel``
    ///   is outside 0...9, or `encoderFailed` with libpng's message.
    public func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        guard (0...9).contains(compressionLevel) else {
            throw MagpieError.encodingFailed(reason: .invalidOption("PNG compression level \(compressionLevel) is outside 0...9"))
        }
        let embedded = EncodedMetadata(image, options)
        let png = image.isAnimated && !options.onlyFirstFrame
            ? try APNGEncoder(compressionLevel: compressionLevel).encode(image)
            : try encodeStill(image.pixels, dropAlpha: image.pixels.isOpaque)
        return PNGMetadataChunks.inserting(icc: embedded.icc, exif: embedded.exif, xmp: embedded.xmp, into: png)
    }

    /// True: PNG carries an ICC profile in `iCCP`.
    public var embedsColorProfile: Bool { true }

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
