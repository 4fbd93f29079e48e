#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// BMP decoder: a strict, bounds-checked parser written here (no library).
///
/// - Headers: BITMAPCOREHEADER (12 bytes), OS/2 2.x (16 and 64), BITMAPINFOHEADER (40) and its V2 (52), V3 (56),
///   V4 (108) and V5 (124) extensions; bottom-up and top-down (negative height) rows.
/// - Pixels: 1/4/8-bit palettes (uncompressed, RLE8, RLE4), 24-bit, and 16/32-bit bit fields (`BI_BITFIELDS`,
///   `BI_ALPHABITFIELDS`; without them 5-5-5 and 8-8-8). An n-bit channel becomes `round(v*255/(2^n-1))`. The fourth
///   byte of a 32-bit `BI_RGB` pixel is padding, not alpha; only an alpha mask gives alpha.
/// - Palettes: `colorsUsed` 0 means 2^bits entries; more entries than 2^bits is corrupt; an index past the palette
///   is drawn opaque black. RLE pixels no code writes show palette entry 0; runs past the row's end are clipped,
///   RLE data below the last row is corrupt.
/// - A V5 header's embedded ICC profile becomes ``Image/colorProfile``; `LCS_sRGB` and the others mean sRGB.
/// - Limits are checked from the header before any pixel memory is allocated; a file shorter than its pixel data is
///   `truncatedData`; nonsense headers (bit count, planes, palette size, masks, header size) are `corruptData`;
///   embedded JPEG/PNG (`BI_JPEG`, `BI_PNG`), CMYK and 2-bit files are `unsupportedFormat`.
public struct BMPCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/bmp``.
    public var format: ImageFormat { .bmp }
    /// BMP: `image/bmp`, `bmp`, alpha, decode only.
    public var traits: FormatTraits {
        FormatTraits(displayName: "BMP", mimeType: "image/bmp", fileExtensions: ["bmp"], supportsAlpha: true)
    }
    /// `BM` followed, after the 14-byte file header, by a DIB header of one of the sizes Windows and OS/2 write.
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        guard leadingBytes.hasASCII("BM"), leadingBytes.count >= 18 else { return false }
        let b = leadingBytes
        let dib = UInt32(b[14]) | UInt32(b[15]) << 8 | UInt32(b[16]) << 16 | UInt32(b[17]) << 24
        return [12, 16, 40, 52, 56, 64, 108, 124].contains(dib)
    }

    /// Decodes a BMP file; see the type's documentation for the rules.
    ///
    /// - Parameters:
    ///   - data: A complete BMP file.
    ///   - options: Limits and scale (BMP has no cheaper smaller decode, so `targetSize` is left to the pipeline).
    /// - Returns: The image with format ``ImageFormat/bmp``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `emptyData`, `truncatedData`, `corruptData`,
    ///   `tooLarge`, `unsupportedFormat` or `outOfMemory`.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        return try data.withUnsafeBytes { raw in
            let bytes = LittleEndianBytes(bytes: raw)
            let header = try Self.parseHeader(bytes, limits: options.limits)
            let pixels = try Self.pixels(bytes, header: header)
            var image = Image(pixels: pixels, scale: options.scale, format: .bmp)
            if let icc = header.iccProfile {
                image.colorProfile = ColorProfile(iccData: Data(raw[icc]), cicp: nil)
            }
            image.sourceInfo = ImageSourceInfo(bitDepth: header.bitsPerSample, hasAlpha: header.hasAlphaChannel)
            return image
        }
    }

    /// The size a BMP file's header declares, without decoding pixels or checking limits.
    ///
    /// - Parameter data: The file, or at least its headers.
    /// - Returns: Format ``ImageFormat/bmp``, the stored size and 1 frame.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `truncatedData`, `corruptData` or `unsupportedFormat`.
    public func header(of data: Data) throws -> ImageHeader {
        try data.withUnsafeBytes { raw in
            let unlimited = ImageDecodingLimits(maxPixelsPerFrame: .max, maxTotalBytes: .max)
            let header = try Self.parseHeader(LittleEndianBytes(bytes: raw), limits: unlimited)
            return ImageHeader(format: .bmp, width: header.width, height: header.height, frameCount: 1)
        }
    }

    private static func parseHeader(_ bytes: LittleEndianBytes, limits: ImageDecodingLimits) throws -> DIBHeader {
        guard bytes.u8(0) == 0x42, bytes.u8(1) == 0x4D else {
            throw MagpieError.decodingFailed(reason: .corruptData(.bmp, message: "no BM signature"))
        }
        guard let offset = bytes.u32(10) else {
            throw MagpieError.decodingFailed(reason: .truncatedData(.bmp, message: "the file ends inside the file header"))
        }
        return try DIBHeader.parse(bytes, at: 14, pixelOffset: Int(offset), format: .bmp, limits: limits)
    }

    private static func pixels(_ bytes: LittleEndianBytes, header: DIBHeader) throws -> PixelBuffer {
        do {
            return try DIBPixels.decode(bytes, header: header, andMask: false, format: .bmp)
        } catch MagpieError.imageCreationFailed(reason: .outOfMemory(let count)) {
            throw MagpieError.decodingFailed(reason: .outOfMemory(.bmp, message: "cannot allocate \(count) bytes of pixels"))
        }
    }
}
