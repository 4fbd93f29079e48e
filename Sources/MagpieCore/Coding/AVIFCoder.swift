import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// AVIF coder (libavif 0.11 with dav1d/aom): still images and image sequences, both ways.
///
/// Decoding
/// - 8-, 10- and 12-bit images come out as straight-alpha RGBA8 (libavif rounds to 8 bits and un-premultiplies
///   premultiplied-alpha files).
/// - The transformative properties are applied in the order `clap`, `irot` (anticlockwise), `imir`
///   (0 flips top to bottom, 1 left to right); an invalid `clap` is ignored. The EXIF orientation is *not*
///   applied on top, whatever ``ImageDecodingOptions/appliesOrientation`` says: in AVIF the properties are the
///   orientation.
/// - Image sequences (`.avifs`) become animations: every frame with its stored duration, and a loop count of 0
///   (AVIF stores none). ``ImageDecodingOptions/onlyFirstFrame`` decodes the first frame only.
/// - libavif's strict checks are off, so files other decoders accept (a missing `pixi`) decode too.
/// - Limits are checked after parsing the container and before any AV1 decoding: libavif itself refuses an
///   `ispe` or grid above the pixel limit, then the frame count and total bytes are checked.
/// - The colour description (ICC profile, and the CICP code points unless all are "unspecified"), EXIF, XMP,
///   bit depth and alpha are reported on the image; ``ImageDecodingOptions/targetSize`` is not used (the pipeline
///   resizes).
///
/// Encoding
/// - Lossy at ``ImageEncodingOptions/quality`` (1...100, mapped to AV1 quantizers 63...0, 4:2:0), or lossless
///   (quantizer 0, identity matrix, 4:4:4) when ``ImageEncodingOptions/lossless`` is set;
///   ``ImageEncodingOptions/speed`` 0...10 (default 6). An alpha channel is written only when some pixel is not
///   opaque.
/// - Several frames become an image sequence (unless ``ImageEncodingOptions/onlyFirstFrame``) with durations in
///   milliseconds.
/// - The colour profile is embedded as ICC, or as nclx when it is CICP only; sRGB is written as nclx 1/13.
///   EXIF and XMP are written only with ``ImageEncodingOptions/MetadataPolicy/keep``.
public struct AVIFCoder: ImageCoder {
    /// The encoder effort used when ``ImageEncodingOptions/speed`` is nil.
    public static let defaultSpeed = 6

    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/avif``.
    public var format: ImageFormat { .avif }
    /// AVIF: `image/avif`, `avif` (also `avifs`), alpha, sequences written, quality 63, chosen when `Accept` names it
    /// (rank 2: over WebP on equal weights).
    public var traits: FormatTraits {
        FormatTraits(
            displayName: "AVIF", mimeType: "image/avif", fileExtensions: ["avif", "avifs"], supportsAlpha: true,
            animatesOnEncode: true, defaultQuality: 63, negotiation: .whenAccepted(rank: 2))
    }
    /// An `ftyp` box naming the `avif` or `avis` brand.
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        leadingBytes.isoBrands.contains { $0 == "avif" || $0 == "avis" }
    }

    /// Always true: AVIF encoding is implemented.
    public var canEncode: Bool { true }
    /// AV1 stores each side minus one in 16 bits.
    public var largestEncodableSize: PixelSize? { PixelSize(width: 65_536, height: 65_536) }
    /// True: AVIF carries the ICC profile (or CICP in an `nclx` box).
    public var embedsColorProfile: Bool { true }

    /// Reads the displayed size (after `clap` and `irot`) and frame count from the container without decoding.
    ///
    /// - Parameter data: A complete AVIF file.
    /// - Returns: The header; for an item libavif refuses as too large, the size it declares.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` when libavif cannot parse the container.
    public func header(of data: Data) throws -> ImageHeader {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        var info = mg_avif_info()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: data) { mg_avif_probe($0, $1, &info, &error) }
        let declared = info.width > 0 && info.height > 0
        guard status == Int32(MG_OK.rawValue) || (status == Int32(MG_ERR_TOO_LARGE.rawValue) && declared) else {
            throw CodecBridge.decodingError(error, format: .avif)
        }
        return ImageHeader(
            format: .avif, width: Int(info.width), height: Int(info.height), frameCount: Int(info.frame_count))
    }

    /// Decodes a complete AVIF file; see the type's documentation for the rules.
    ///
    /// - Parameters:
    ///   - data: A complete AVIF or AVIF sequence file.
    ///   - options: First-frame-only, scale and limits.
    /// - Returns: The image with format ``ImageFormat/avif``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `emptyData`, `truncatedData`, `corruptData`,
    ///   `tooLarge` (checked before decoding), `unsupportedFormat` or `outOfMemory`, carrying libavif's message.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        return try CodecBridge.withBytes(of: data) { bytes, count in
            var error = mg_error()
            var limits = CodecBridge.limits(options)
            var decodeOptions = mg_avif_decode_options(only_first_frame: options.onlyFirstFrame ? 1 : 0)
            var decoded = mg_avif_image()
            defer { mg_avif_image_release(&decoded) }
            guard mg_avif_decode(bytes, count, &limits, &decodeOptions, &decoded, &error) == Int32(MG_OK.rawValue)
            else { throw CodecBridge.decodingError(error, format: .avif) }

            var frames: [ImageFrame] = []
            frames.reserveCapacity(Int(decoded.frame_count))
            for index in 0..<Int(decoded.frame_count) {
                let bitmap = decoded.frames[index]
                // Ownership moves to Swift; the release in `defer` must skip this one.
                decoded.frames[index].pixels = nil
                let duration: Duration =
                    decoded.is_sequence != 0 ? .microseconds(Int64(decoded.durations_us[index])) : .zero
                frames.append(ImageFrame(pixels: CodecBridge.pixels(adopting: bitmap), duration: duration))
            }
            var image = try Image(
                frames: frames, loopCount: decoded.is_sequence != 0 ? 0 : nil, format: .avif, scale: options.scale)
            CodecBridge.attach(&decoded.meta, to: &image)
            return image
        }
    }

    /// Encodes `image` as AVIF: a still image, or an image sequence when it has several frames and
    /// `options.onlyFirstFrame` is false.
    ///
    /// - Parameters:
    ///   - image: The image to write.
    ///   - options: ``ImageEncodingOptions/quality`` (lossy only), ``ImageEncodingOptions/lossless``,
    ///     ``ImageEncodingOptions/speed``, ``ImageEncodingOptions/onlyFirstFrame`` and
    ///     ``ImageEncodingOptions/metadata``.
    /// - Returns: The AVIF file's bytes.
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` with `invalidOption` for a lossy quality outside 1...100
    ///   or a speed outside 0...10, or `encoderFailed` carrying libavif's message.
    public func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        let quality: Int32 = options.lossless ? 100 : try options.validatedQuality()
        let speed = options.speed ?? Self.defaultSpeed
        guard (0...10).contains(speed) else {
            throw MagpieError.encodingFailed(reason: .invalidOption("speed \(speed) is outside 0...10"))
        }
        let profile = image.colorProfile.flatMap { $0.isSRGB ? nil : $0 }
        // CICP-only profiles go into an nclx box; everything else is embedded as ICC.
        let cicp = profile?.iccData == nil && profile?.gamma == nil ? profile?.cicp : nil
        let icc = cicp == nil ? profile.flatMap(ColorConverter.iccForEmbedding) ?? Data() : Data()
        // libavif turns an EXIF orientation into irot/imir boxes: the reset to 1 keeps upright pixels upright.
        let exif = EncodedMetadata.exif(image, options) ?? Data()
        let xmp = EncodedMetadata.xmp(image, options) ?? Data()
        let frames = options.onlyFirstFrame ? Array(image.frames.prefix(1)) : image.frames

        var error = mg_error()
        var output = mg_buffer()
        let status: Int32 = withExtendedLifetime(image) {
            icc.withUnsafeBytes { iccBytes in
                exif.withUnsafeBytes { exifBytes in
                    xmp.withUnsafeBytes { xmpBytes in
                        var encodeOptions = mg_avif_encode_options(
                            quality: quality, lossless: options.lossless ? 1 : 0, speed: Int32(speed),
                            icc: iccBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), icc_length: iccBytes.count,
                            has_cicp: cicp != nil ? 1 : 0, cicp_primaries: cicp?.colorPrimaries ?? 0,
                            cicp_transfer: cicp?.transferCharacteristics ?? 0,
                            exif: exifBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            exif_length: exifBytes.count,
                            xmp: xmpBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), xmp_length: xmpBytes.count)
                        // Frame storage is malloc'd and stays put while `image` is alive, so raw pointers are safe.
                        let records = frames.map { frame in
                            mg_avif_frame(
                                rgba: UnsafePointer(frame.pixels.storage.bytes),
                                duration_ms: WebPCoder.milliseconds(frame.duration))
                        }
                        return mg_avif_encode(
                            records, UInt32(records.count), UInt32(image.width), UInt32(image.height), &encodeOptions,
                            &output, &error)
                    }
                }
            }
        }
        guard status == Int32(MG_OK.rawValue) else { throw CodecBridge.encodingError(error, format: .avif) }
        return CodecBridge.data(adopting: output)
    }
}
