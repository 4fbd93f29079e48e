import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// JPEG XL coder (libjxl 0.7): stills, alpha and animations, both ways.
///
/// Decoding
/// - Pixels come out as straight-alpha RGBA8 (libjxl converts any bit depth), turned upright by the codestream's
///   orientation unless ``ImageDecodingOptions/appliesOrientation`` is false.
/// - Animations are coalesced by libjxl: each frame is the full canvas as displayed, with its duration
///   (ticks × `tps_denominator` / `tps_numerator` seconds), and ``Image/loopCount`` is `num_loops` as stored
///   (0 = forever).
/// - Colour: no profile when the encoded colour space is plain sRGB, otherwise the ICC profile libjxl gives for the
///   decoded pixels (the embedded one, or one it synthesises from the colour encoding). The `Exif` and `xml ` boxes
///   (Brotli-compressed `brob` boxes too) become ``Image/metadata``.
/// - The SizeHeader is checked against ``ImageDecodingOptions/limits`` before any pixel memory exists (libjxl has
///   no limit of its own); frames are counted against the frame and byte limits as they arrive.
/// - A file that ends early throws `truncatedData`, even when earlier frames decoded.
///
/// Encoding
/// - Lossless (``ImageEncodingOptions/lossless``: modular, exact, colour under transparent pixels kept) or lossy
///   at ``ImageEncodingOptions/quality`` mapped to a butteraugli distance as cjxl does
///   (`0.1 + (100 - q) × 0.09` from 30 up, steeper below, at most 25).
/// - ``ImageEncodingOptions/speed`` (0 slowest … 10 fastest) sets the effort `10 - speed` (1...9); nil keeps
///   libjxl's default effort 7.
/// - Several frames become an animation (unless ``ImageEncodingOptions/onlyFirstFrame``) with 1 ms ticks and the
///   image's loop count (nil, "play once", is written as 1).
/// - An RGB colour profile is embedded as ICC (``ColorConverter``'s embedding rule); none means sRGB. EXIF and XMP
///   are written as `Exif` and `xml ` boxes only when ``ImageEncodingOptions/metadata`` is `.keep`.
/// - An alpha channel is written only when some frame has a pixel that is not opaque.
public struct JXLCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/jxl``.
    public var format: ImageFormat { .jxl }
    /// JPEG XL: `image/jxl`, `jxl`, alpha, animations written, quality 77, chosen when `Accept` names it for a JPEG XL
    /// source only (too slow to write for every photo).
    public var traits: FormatTraits {
        FormatTraits(
            displayName: "JPEG XL", mimeType: "image/jxl", fileExtensions: ["jxl"], supportsAlpha: true, animatesOnEncode: true,
            defaultQuality: 77, negotiation: .whenAcceptedForSameFormat)
    }
    /// A bare codestream (`FF 0A`) or the ISO container's signature box.
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        leadingBytes.hasBytes([0xFF, 0x0A]) || leadingBytes.hasBytes([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A])
    }

    /// Always true: JPEG XL encoding is implemented.
    public var canEncode: Bool { true }
    /// The codestream level libjxl writes by default (5) holds at most 2^18 pixels a side.
    public var largestEncodableSize: PixelSize? { PixelSize(width: 262_144, height: 262_144) }
    /// True: JPEG XL carries the ICC profile in its colour encoding.
    public var embedsColorProfile: Bool { true }

    /// Reads the basic info without decoding pixels or checking limits.
    ///
    /// - Parameter data: A JPEG XL codestream or container, at least up to its basic info.
    /// - Returns: The stored size (before orientation); the frame count is 1 for a still and nil for an animation
    ///   (not known without decoding).
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `truncatedData` or `corruptData`.
    public func header(of data: Data) throws -> ImageHeader {
        var info = mg_jxl_info()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: data) { mg_jxl_probe($0, $1, &info, &error) }
        guard status == Self.ok else { throw CodecBridge.decodingError(error, format: .jxl) }
        return ImageHeader(
            format: .jxl, width: Int(info.width), height: Int(info.height), frameCount: info.is_animated != 0 ? nil : 1)
    }

    /// Decodes a complete JPEG XL file; see the type's documentation for the rules.
    ///
    /// - Parameters:
    ///   - data: A complete JPEG XL codestream or container.
    ///   - options: First-frame-only, scale, orientation and limits; `targetSize` is not used (the pipeline resizes).
    /// - Returns: The image with format ``ImageFormat/jxl``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `emptyData`, `truncatedData`, `corruptData`,
    ///   `tooLarge` or `outOfMemory`.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        var limits = CodecBridge.limits(options)
        var decoded = mg_jxl_image()
        var meta = mg_image_meta()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: data) {
            mg_jxl_decode(
                $0, $1, &limits, options.onlyFirstFrame ? 1 : 0, options.appliesOrientation ? 0 : 1, &decoded, &meta,
                &error)
        }
        guard status == Self.ok else { throw CodecBridge.decodingError(error, format: .jxl) }
        defer {
            mg_jxl_image_release(&decoded)
            mg_image_meta_release(&meta)
        }
        let info = decoded.info
        let animated = info.is_animated != 0 && info.tps_numerator > 0
        var frames: [ImageFrame] = []
        frames.reserveCapacity(Int(decoded.frame_count))
        for index in 0..<Int(decoded.frame_count) {
            let bitmap = decoded.frames[index]
            // Ownership moves to Swift; the release in `defer` must skip this one.
            decoded.frames[index].pixels = nil
            let duration = animated ? Self.duration(ticks: decoded.ticks[index], info: info) : .zero
            frames.append(ImageFrame(pixels: CodecBridge.pixels(adopting: bitmap), duration: duration))
        }
        var image = try Image(
            frames: frames, loopCount: animated ? Int(info.loop_count) : nil, format: .jxl, scale: options.scale)
        CodecBridge.attach(&meta, to: &image)
        return image
    }

    /// Encodes `image` as JPEG XL: a still image, or an animation when it has several frames and
    /// `options.onlyFirstFrame` is false.
    ///
    /// - Parameters:
    ///   - image: The image to write.
    ///   - options: ``ImageEncodingOptions/quality`` (lossy only), ``ImageEncodingOptions/lossless``,
    ///     ``ImageEncodingOptions/speed``, ``ImageEncodingOptions/onlyFirstFrame`` and
    ///     ``ImageEncodingOptions/metadata``.
    /// - Returns: The JPEG XL file's bytes (a container when boxes are written, else a bare codestream).
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` with `invalidOption` for a lossy quality outside 1...100,
    ///   or `encoderFailed` carrying libjxl's `JxlEncoderError` name.
    public func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        let distance: Float = options.lossless ? 0 : Self.distance(forQuality: Int(try options.validatedQuality()))
        let frames = options.onlyFirstFrame ? [image.frames[0]] : image.frames
        let profile = image.colorProfile.flatMap { $0.colorModel == .rgb ? ColorConverter.iccForEmbedding($0) : nil }
        let icc = [UInt8](profile ?? Data())
        let exif = [UInt8](EncodedMetadata.exif(image, options) ?? Data())
        let xmp = [UInt8](EncodedMetadata.xmp(image, options) ?? Data())
        let hasAlpha = frames.contains { !$0.pixels.isOpaque }
        var output = mg_buffer()
        var error = mg_error()
        // Frame storage is malloc'd and stays put while `image` is alive, so raw pointers are safe here.
        let status = withExtendedLifetime(image) {
            icc.withUnsafeBufferPointer { icc in
                exif.withUnsafeBufferPointer { exif in
                    xmp.withUnsafeBufferPointer { xmp in
                        var settings = mg_jxl_encode_options(
                            lossless: options.lossless ? 1 : 0, distance: distance,
                            effort: options.speed.map { Int32(min(9, max(1, 10 - $0))) } ?? 0,
                            loop_count: UInt32(clamping: max(image.loopCount ?? 1, 0)),
                            icc: icc.baseAddress, icc_length: icc.count,
                            exif: exif.baseAddress, exif_length: exif.count,
                            xmp: xmp.baseAddress, xmp_length: xmp.count)
                        let list = frames.map { frame in
                            mg_jxl_frame(
                                rgba: UnsafePointer(frame.pixels.storage.bytes),
                                duration_ms: WebPCoder.milliseconds(frame.duration))
                        }
                        return mg_jxl_encode(
                            list, UInt32(list.count), UInt32(image.width), UInt32(image.height), hasAlpha ? 1 : 0,
                            &settings, &output, &error)
                    }
                }
            }
        }
        guard status == Self.ok else { throw CodecBridge.encodingError(error, format: .jxl) }
        return CodecBridge.data(adopting: output)
    }

    /// `ticks × tps_denominator / tps_numerator` seconds, exactly (to the attosecond): 100 ticks at 1000 per second
    /// are `.milliseconds(100)`, not the nearest Double to 0.1 s.
    static func duration(ticks: UInt32, info: mg_jxl_info) -> Duration {
        let numerator = UInt64(max(1, info.tps_numerator))
        let total = UInt64(ticks) * UInt64(info.tps_denominator)
        let product = (total % numerator).multipliedFullWidth(by: 1_000_000_000_000_000_000)
        let attoseconds = numerator.dividingFullWidth(product).quotient
        return Duration(secondsComponent: Int64(total / numerator), attosecondsComponent: Int64(attoseconds))
    }

    /// cjxl's quality-to-distance mapping, kept within libjxl's 0.1...25.
    static func distance(forQuality quality: Int) -> Float {
        let q = Double(quality)
        let distance = q >= 30 ? 0.1 + (100 - q) * 0.09 : 6.4 + pow(2.5, (30 - q) / 5) / 6.25
        return Float(min(25, max(0.1, distance)))
    }

    private static let ok = Int32(MG_OK.rawValue)
}
