import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HEIF/HEIC decoder (libheif 1.15 with libde265, and dav1d for AV1-coded HEIF): the primary image only.
///
/// Decoding
/// - The primary image (grids and tiles as phones write them included) comes out as straight-alpha RGBA8, one
///   frame; thumbnails, depth maps and other top-level images are ignored (when `pitm` names a thumbnail, the
///   first top-level image is decoded). Premultiplied-alpha files come out straight (libheif 1.15 does not
///   un-premultiply, so the coder does).
/// - libheif applies `clap`, `irot` and `imir`; the EXIF orientation is *not* applied on top, whatever
///   ``ImageDecodingOptions/appliesOrientation`` says.
/// - More than 8 bits per sample become `round(v*255/(2^d-1))`. Limited-range YCbCr stated by an nclx box is
///   converted here with the nclx matrix, because libheif 1.15 ignores `full_range_flag = 0`.
/// - Limits: libheif's own side limit is lowered to the pixel limit while parsing, then the primary image's
///   `ispe` and displayed sizes are checked before anything is decoded.
/// - The colour description (the ICC profile, or the nclx code points), EXIF and XMP, the bit depth and alpha
///   are reported on the image.
///
/// Encoding is not offered (``canEncode`` is false): HEVC encoding is excluded for its patent licensing, as
/// imgproxy decided; write AVIF instead.
public struct HEIFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/heic``.
    public var format: ImageFormat { .heic }
    /// HEIF: `image/heic`, `heic` (also `heif`), alpha, decode only.
    public var traits: FormatTraits {
        FormatTraits(displayName: "HEIC", mimeType: "image/heic", fileExtensions: ["heic", "heif"], supportsAlpha: true)
    }
    /// An `ftyp` box naming a HEIF brand (`heic`, `heix`, `mif1`, …) and not AVIF's (an AVIF file names `mif1` too).
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        let brands = leadingBytes.isoBrands
        return !brands.contains { $0 == "avif" || $0 == "avis" } && brands.contains(where: Self.brands.contains)
    }
    private static let brands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]

    /// Reads the primary image's displayed size (after `clap` and `irot`) without decoding; the frame count is 1.
    ///
    /// - Parameter data: A complete HEIF file.
    /// - Returns: The header.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` carrying libheif's message when it cannot read the file.
    public func header(of data: Data) throws -> ImageHeader {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        var info = mg_heif_info()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: data) { mg_heif_probe($0, $1, &info, &error) }
        guard status == Int32(MG_OK.rawValue) else { throw CodecBridge.decodingError(error, format: .heic) }
        return ImageHeader(format: .heic, width: Int(info.width), height: Int(info.height), frameCount: 1)
    }

    /// Decodes the primary image of a complete HEIF file; see the type's documentation for the rules.
    ///
    /// - Parameters:
    ///   - data: A complete HEIF/HEIC file.
    ///   - options: Scale and limits (a still image: frame options have no effect).
    /// - Returns: A still image with format ``ImageFormat/heic``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `emptyData`, `truncatedData`, `corruptData`,
    ///   `tooLarge` (checked before decoding), `unsupportedFormat` or `outOfMemory`, carrying libheif's message.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        return try CodecBridge.withBytes(of: data) { bytes, count in
            var error = mg_error()
            var limits = CodecBridge.limits(options)
            var bitmap = mg_bitmap()
            var meta = mg_image_meta()
            defer { mg_image_meta_release(&meta) }
            guard mg_heif_decode(bytes, count, &limits, &bitmap, &meta, &error) == Int32(MG_OK.rawValue) else {
                throw CodecBridge.decodingError(error, format: .heic)
            }
            var image = Image(pixels: CodecBridge.pixels(adopting: bitmap), scale: options.scale, format: .heic)
            CodecBridge.attach(&meta, to: &image)
            return image
        }
    }
}
