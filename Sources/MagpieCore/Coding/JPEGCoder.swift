import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// JPEG coder on libjpeg-turbo: baseline, progressive, arithmetic, greyscale, CMYK/YCCK.
///
/// Decoding applies the EXIF orientation (unless ``ImageDecodingOptions/appliesOrientation`` is false) and,
/// with a ``ImageDecodingOptions/targetSize``, uses DCT scaling (N/8) to decode no more pixels than needed.
/// Encoding writes 8-bit RGB: translucent pixels are first composited over
/// ``ImageEncodingOptions/background``, and only the first frame of an animation is written.
/// 12-bit JPEGs are reported as unsupported.
public struct JPEGCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/jpeg``.
    public var format: ImageFormat { .jpeg }
    /// JPEG: `image/jpeg`, `jpg` (also `jpeg`, `jpe`, `jfif`), no alpha, quality 80, always negotiable.
    public var traits: FormatTraits {
        FormatTraits(
            displayName: "JPEG", mimeType: "image/jpeg", fileExtensions: ["jpg", "jpeg", "jpe", "jfif"], supportsAlpha: false,
            defaultQuality: 80, negotiation: .universal)
    }
    /// An SOI marker followed by another marker: `FF D8 FF`.
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool { leadingBytes.hasBytes([0xFF, 0xD8, 0xFF]) }
    /// The stored size (before EXIF orientation) and 1 frame, from ``storedHeader(of:)``.
    public func header(of data: Data) throws -> ImageHeader {
        let stored = try storedHeader(of: data)
        return ImageHeader(format: .jpeg, width: stored.width, height: stored.height, frameCount: 1)
    }
    /// Always true.
    public var canEncode: Bool { true }
    /// JPEG stores each side in 16 bits; libjpeg-turbo writes at most 65,500 (its JPEG_MAX_DIMENSION).
    public var largestEncodableSize: PixelSize? { PixelSize(width: 65_500, height: 65_500) }

    /// Reads the stored size and properties from the header without decoding pixels.
    ///
    /// - Parameter data: A JPEG file, or at least everything up to its first scan.
    /// - Returns: The size in pixels as stored (before EXIF orientation), and whether the file is progressive.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` when the header is missing, cut short or malformed.
    public func storedHeader(of data: Data) throws -> (width: Int, height: Int, isProgressive: Bool) {
        var header = mg_jpeg_header()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: data) { mg_jpeg_read_header($0, $1, &header, &error) }
        guard status == 0 else { throw CodecBridge.decodingError(error, format: .jpeg) }
        return (Int(header.width), Int(header.height), header.is_progressive != 0)
    }

    /// Decodes a JPEG, upright unless orientation is turned off, and DCT-scaled toward
    /// ``ImageDecodingOptions/targetSize`` when one is set (never below what it needs).
    ///
    /// - Parameters:
    ///   - data: A complete JPEG file.
    ///   - options: Target size, scale, orientation and limits; `onlyFirstFrame` has no effect.
    /// - Returns: A still image whose format is ``ImageFormat/jpeg``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `corruptData`, `truncatedData`, `tooLarge`
    ///   (checked against `options.limits` before allocating), `unsupportedFormat` (12-bit JPEG) or `outOfMemory`.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        try decode(header: data, options: options) { request, limits, bitmap, rawCMYK, error in
            CodecBridge.withBytes(of: data) {
                mg_jpeg_decode(
                    $0, $1, request.minWidth, request.minHeight, request.flags, request.transform, limits, bitmap,
                    rawCMYK, error)
            }
        }
    }

    /// Decodes the JPEG in `file` while reading it (64 KiB at a time), not after reading it whole: a large baseline
    /// file made into a thumbnail (decoded at 1/8) never has more than a window per thread of it in memory. The
    /// pixels and metadata are those of ``decode(_:options:)`` on the file's bytes, and so is the kind of error, except
    /// that damaged entropy data may fail here as `corruptData` ("bad Huffman code") where the bytes decode to garbage:
    /// libjpeg-turbo checks codes only on its slower path, which it takes near the end of its input buffer.
    ///
    /// - Parameters:
    ///   - file: An open JPEG file.
    ///   - options: As for ``decode(_:options:)``.
    /// - Returns: A still image whose format is ``ImageFormat/jpeg``.
    /// - Throws: What ``decode(_:options:)`` throws, and
    ///   ``MagpieError/DecodingFailureReason/unreadableFile(path:message:)`` when a read fails.
    public func decode(_ file: ImageFile, options: ImageDecodingOptions) throws -> Image {
        // A file that is all in its leading bytes is decoded from them (as bytes, with nothing more to read); a header
        // that does not reach a scan from the whole file, for the same error as from bytes.
        if file.leadingBytes.count == file.size { return try decode(file.leadingBytes, options: options) }
        guard let header = try Self.header(of: file) else { return try decode(file.readAll(), options: options) }
        return try decode(header: header, options: options, path: file.path) { request, limits, bitmap, rawCMYK, error in
            // The descriptor is closed when `file` goes: it must outlive the C call.
            withExtendedLifetime(file) {
                mg_jpeg_decode_file(
                    file.descriptor, UInt64(file.size), request.minWidth, request.minHeight, request.flags,
                    request.transform, limits, bitmap, rawCMYK, error)
            }
        }
    }

    /// The file's header (every segment up to the first scan's), or nil when the file ends inside it or it is
    /// malformed.
    private static func header(of file: ImageFile) throws -> Data? {
        var bytes = file.leadingBytes
        while true {
            switch JPEGSegments.headerExtent(of: bytes) {
            case .complete(let count): return bytes.prefix(count)
            case .malformed: return nil
            case .needsBytes(let count):
                guard count <= file.size, bytes.count < file.size else { return nil }
                bytes = try file.read(offset: 0, count: min(file.size, max(count, bytes.count * 2)))
            }
        }
    }

    /// What one call of a C decode function is asked for, besides its input and the limits and results it is
    /// given pointers to.
    private struct DecodeRequest {
        var minWidth: UInt32, minHeight: UInt32, flags: Int32
        var transform: UnsafeMutableRawPointer?
    }

    /// A C decode call: the request, then the limits, the bitmap, the raw-CMYK flag and the error it fills.
    private typealias DecodeCall = (
        DecodeRequest, UnsafePointer<mg_limits>, UnsafeMutablePointer<mg_bitmap>, UnsafeMutablePointer<Int32>,
        UnsafeMutablePointer<mg_error>
    ) -> Int32

    /// The decode around a C call (`run`, on the bytes or on a file): metadata, orientation and the DCT scale from
    /// `header` (the file's bytes up to its first scan at least), colour, errors.
    private func decode(
        header data: Data, options: ImageDecodingOptions, path: String? = nil, run: DecodeCall
    ) throws -> Image {
        let embedded = JPEGSegments.read(data)
        let orientation = options.appliesOrientation ? ImageOrientation(exifPayload: embedded.metadata.exif ?? Data()) : .up
        var minimum = PixelSize(width: 0, height: 0)
        if options.targetSize != nil {
            let stored = try header(of: data)
            let display = orientation.swapsDimensions
                ? PixelSize(width: stored.height, height: stored.width)
                : PixelSize(width: stored.width, height: stored.height)
            if let required = options.requiredSize(forImageOf: display) {
                minimum = orientation.swapsDimensions
                    ? PixelSize(width: required.height, height: required.width) : required
            }
        }
        // CMYK samples go through the file's CMYK profile only when sRGB is asked for; otherwise the C side applies
        // the corpus's formula and the profile stays attached for the record.
        let cmykProfile = options.colorSpace == .sRGB ? embedded.colorProfile.flatMap(ColorConverter.usableCMYKProfile) : nil
        var limits = CodecBridge.limits(options)
        var bitmap = mg_bitmap()
        var error = mg_error()
        var rawCMYK: Int32 = 0
        let flags = Self.decodeFlags | (cmykProfile != nil ? Int32(MG_JPEG_KEEP_CMYK) : 0)
        // An RGB profile is converted row by row during the decode (beside it, on a second thread, for a large
        // image) rather than afterwards by the registry: the conversion then adds little to the decode's time.
        let convertsRows = options.colorSpace == .sRGB && cmykProfile == nil
        var convertedRows = false
        let status = ColorConverter.withDecodingTransform(for: convertsRows ? embedded.colorProfile : nil) { transform in
            convertedRows = transform != nil
            let request = DecodeRequest(
                minWidth: UInt32(minimum.width), minHeight: UInt32(minimum.height), flags: flags, transform: transform)
            return run(request, &limits, &bitmap, &rawCMYK, &error)
        }
        guard status == 0 else { throw CodecBridge.decodingError(error, format: .jpeg, path: path) }
        var stored = CodecBridge.pixels(adopting: bitmap)
        var colorProfile = convertedRows ? nil : embedded.colorProfile
        if rawCMYK != 0, let cmykProfile {
            ColorConverter.convertCMYKInPlace(&stored, inverted: rawCMYK == 2, iccProfile: cmykProfile)
            colorProfile = nil
        }
        var image = Image(pixels: try orientation.apply(to: stored), scale: options.scale, format: .jpeg)
        image.colorProfile = colorProfile
        image.metadata = embedded.metadata
        image.sourceInfo = ImageSourceInfo(bitDepth: 8, hasAlpha: false)
        return image
    }

    /// The flags every decode passes to `mg_jpeg_decode` (the benchmark worker's raw C cell passes them too): a large
    /// baseline JPEG read at 1/8 scale (thumbnails) splits its Huffman decoding over two threads when the process may
    /// run on more than one core. Its affinity mask decides, not the machine's core count, which `ProcessInfo` reports
    /// (2 under `taskset -c 0` here): pinned to one core, the second thread only took turns with the first, and the
    /// same thumbnail cost 41 or 52 ms of CPU from process to process.
    package static let decodeFlags: Int32 = {
        let cores = mg_usable_cpu_count()
        let usable = cores > 0 ? Int(cores) : ProcessInfo.processInfo.activeProcessorCount
        return Int32(MG_JPEG_FAST) | (usable > 1 ? Int32(MG_JPEG_TWO_THREADS) : 0)
    }()

    /// Encodes the first frame of `image` as a baseline or progressive JPEG.
    ///
    /// - Parameters:
    ///   - image: The image; translucent pixels are composited over `options.background`.
    ///   - options: ``ImageEncodingOptions/quality`` (1...100), ``ImageEncodingOptions/progressive`` and
    ///     ``ImageEncodingOptions/background``.
    /// - Returns: The JPEG file's bytes.
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` with `invalidOption` for a quality outside 1...100, or
    ///   `encoderFailed` with libjpeg's message.
    public func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        let quality = try options.validatedQuality()
        let pixels = image.pixels.isOpaque ? image.pixels : image.pixels.flattened(over: options.background)
        var buffer = mg_buffer()
        var error = mg_error()
        let status = pixels.withUnsafeBytes { raw in
            mg_jpeg_encode(
                raw.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(pixels.width), UInt32(pixels.height),
                quality, options.progressive ? 1 : 0, &buffer, &error)
        }
        guard status == 0 else { throw CodecBridge.encodingError(error, format: .jpeg) }
        let embedded = EncodedMetadata(image, options)
        return JPEGSegments.inserting(icc: embedded.icc, exif: embedded.exif, xmp: embedded.xmp, into: CodecBridge.data(adopting: buffer))
    }

    /// True: JPEG carries an ICC profile in APP2 segments.
    public var embedsColorProfile: Bool { true }
}

extension PixelBuffer {
    /// The pixels composited over an opaque `background` (for formats without alpha).
    ///
    /// - Parameter background: The colour under translucent pixels; its alpha is ignored.
    /// - Returns: A copy in which every pixel is opaque; opaque pixels keep their colour.
    public func flattened(over background: RGBAColor) -> PixelBuffer {
        var copy = self
        let bg = (UInt32(background.red), UInt32(background.green), UInt32(background.blue))
        copy.withUnsafeMutableBytes { raw in
            let p = raw.bindMemory(to: UInt8.self)
            var i = 0
            while i < p.count {
                let a = UInt32(p[i + 3])
                if a != 255 {
                    let inv = 255 - a
                    p[i] = UInt8((UInt32(p[i]) * a + bg.0 * inv + 127) / 255)
                    p[i + 1] = UInt8((UInt32(p[i + 1]) * a + bg.1 * inv + 127) / 255)
                    p[i + 2] = UInt8((UInt32(p[i + 2]) * a + bg.2 * inv + 127) / 255)
                    p[i + 3] = 255
                }
                i += 4
            }
        }
        return copy
    }
}
