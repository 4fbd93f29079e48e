import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// TIFF decoder (libtiff 4.5): classic TIFF and BigTIFF, strips and tiles, every compression libtiff was built with
/// (none, LZW, deflate, PackBits, CCITT, JPEG, old-style JPEG, LZMA, WebP, …), 1 to 16 bits, gray, RGB, palette,
/// CMYK, YCbCr and CIE L*a*b*.
///
/// Decoding
/// - Pixels are libtiff's RGBA interface output: 16-bit colour samples become `(v*255+32767)/65535` (16-bit gray
///   keeps its high byte, as libtiff and the corpus reference do), MinIsWhite is inverted, 16-bit colormaps are
///   shifted right by 8. Associated alpha is un-premultiplied with
///   `min(255, c*255/a)`; unassociated alpha is kept as stored.
/// - CMYK (InkSet CMYK, 8 or 16 bits) is read from its samples: with an embedded CMYK ICC profile and
///   ``ImageDecodingOptions/colorSpace`` `.sRGB` it is converted through that profile, otherwise by
///   `R = (255-C)*(255-K)/255` rounded (likewise G and B), and the CMYK profile stays on the image.
/// - The Orientation tag (all eight values) is applied when ``ImageDecodingOptions/appliesOrientation`` is set.
/// - A multi-page file decodes as frames, one per page of the main IFD chain (SubIFDs such as thumbnails are not
///   pages), with zero durations and no loop count. All frames take the first page's (oriented) size: a page of
///   another size is drawn at the top-left corner of a transparent canvas of that size, cropped where it is larger.
///   ``ImageSourceInfo/entries`` lists every page as stored (width, height, bits per sample).
/// - The first page's ICC profile (tag 34675) and XMP packet (tag 700) are reported; EXIF is not extracted (an EXIF
///   IFD inside a TIFF is part of the file's own structure, not a separate payload).
/// - Any error libtiff reports while reading pixels (a short strip, damaged compressed data) fails the decode with
///   libtiff's message: no partial image. Every page's size, its strip or tile size, the page count and the total
///   bytes are checked against ``ImageDecodingOptions/limits`` before any pixel memory is allocated.
/// - ``ImageDecodingOptions/targetSize`` is not used: libtiff cannot decode smaller, so the pipeline resizes.
///
/// Encoding is not implemented (``canEncode`` is false).
public struct TIFFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/tiff``.
    public var format: ImageFormat { .tiff }
    /// TIFF: `image/tiff`, `tiff` (also `tif`), alpha, decode only.
    public var traits: FormatTraits {
        FormatTraits(displayName: "TIFF", mimeType: "image/tiff", fileExtensions: ["tiff", "tif"], supportsAlpha: true)
    }

    /// True for classic TIFF (`II*\0`, `MM\0*`) and BigTIFF (`II+\0`, `MM\0+`).
    ///
    /// - Parameter leadingBytes: The start of the file (only the first four bytes are looked at).
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        guard leadingBytes.count >= 4 else { return false }
        let b = leadingBytes
        return (b[0] == 0x49 && b[1] == 0x49 && (b[2] == 0x2A || b[2] == 0x2B) && b[3] == 0)
            || (b[0] == 0x4D && b[1] == 0x4D && b[2] == 0 && (b[3] == 0x2A || b[3] == 0x2B))
    }

    /// Reads the first page's stored size and the number of pages, without decoding pixels or checking limits.
    ///
    /// - Parameter data: A TIFF file (its directories must be present).
    /// - Returns: IFD0's width and height (before orientation) and the page count of the main IFD chain.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with libtiff's message when the file cannot be opened.
    public func header(of data: Data) throws -> ImageHeader {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        return try CodecBridge.withBytes(of: data) { bytes, count in
            let file = try Self.open(bytes, count, maxSingleAllocation: 0)
            defer { mg_tiff_close(file) }
            var error = mg_error()
            var page = mg_tiff_page()
            guard mg_tiff_page_info(file, 0, &page, &error) == Self.ok else {
                throw CodecBridge.decodingError(error, format: .tiff)
            }
            return ImageHeader(
                format: .tiff, width: Int(page.width), height: Int(page.height),
                frameCount: Int(mg_tiff_page_count(file)))
        }
    }

    /// Decodes every page (or only the first with ``ImageDecodingOptions/onlyFirstFrame``); see the type's
    /// documentation for the rules.
    ///
    /// - Parameters:
    ///   - data: A complete TIFF file.
    ///   - options: First-frame-only, scale, orientation, colour space and limits.
    /// - Returns: The image with format ``ImageFormat/tiff``: one frame per page.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `emptyData`, `truncatedData`, `corruptData`,
    ///   `tooLarge` (checked before allocating), `unsupportedFormat` (a layout libtiff cannot turn into RGBA)
    ///   or `outOfMemory`, carrying libtiff's message.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        return try CodecBridge.withBytes(of: data) { bytes, count in
            var limits = CodecBridge.limits(options)
            let file = try Self.open(bytes, count, maxSingleAllocation: limits.max_total_bytes)
            defer { mg_tiff_close(file) }
            let pages = try Self.pageInfos(file, options: options)
            var meta = mg_image_meta()
            var error = mg_error()
            guard mg_tiff_read_meta(file, &meta, &error) == Self.ok else {
                throw CodecBridge.decodingError(error, format: .tiff)
            }
            defer { mg_image_meta_release(&meta) }
            let icc = meta.icc.bytes.map { Data(bytes: $0, count: meta.icc.length) }
            let cmykProfile = options.colorSpace == .sRGB ? icc.flatMap(Self.cmykProfile) : nil

            let canvas = Self.displaySize(of: pages[0], options: options)
            var frames: [ImageFrame] = []
            var convertedCMYK = false
            for index in pages.indices {
                var bitmap = mg_bitmap()
                var cmyk = mg_buffer()
                let status = cmykProfile != nil
                    ? mg_tiff_decode_page(file, UInt32(index), &limits, &bitmap, &cmyk, &error)
                    : mg_tiff_decode_page(file, UInt32(index), &limits, &bitmap, nil, &error)
                guard status == Self.ok else { throw CodecBridge.decodingError(error, format: .tiff) }
                var pixels = CodecBridge.pixels(adopting: bitmap)
                if let cmykProfile, let samples = cmyk.bytes {
                    defer { mg_free(samples) }
                    convertedCMYK = Self.convert(samples, profile: cmykProfile, into: &pixels) || convertedCMYK
                }
                let orientation = options.appliesOrientation
                    ? ImageOrientation(rawValue: Int(pages[index].orientation)) ?? .up : .up
                pixels = try orientation.apply(to: pixels)
                if pixels.width != canvas.width || pixels.height != canvas.height {
                    pixels = try Self.placed(pixels, on: canvas)
                }
                frames.append(ImageFrame(pixels: pixels))
            }
            var image = try Image(frames: frames, loopCount: nil, format: .tiff, scale: options.scale)
            CodecBridge.attach(&meta, to: &image)
            if image.metadata.exif == nil { image.metadata.exif = TIFFEXIFPayload.payload(fromTIFF: data) }
            if convertedCMYK { image.colorProfile = nil }
            // The listing is a description, not the decode: capped at the frame limit, and a page that cannot be
            // described ends it rather than failing pixels that decoded.
            let all = min(Int(mg_tiff_page_count(file)), max(1, options.limits.maxFrameCount))
            if all > 1 {
                image.sourceInfo?.entries = (0..<all).compactMap { index in
                    guard let page = index < pages.count ? pages[index] : try? Self.pageInfo(file, index) else { return nil }
                    return ImageSourceInfo.Entry(
                        width: Int(page.width), height: Int(page.height), bitDepth: Int(page.bit_depth))
                }
            }
            return image
        }
    }

    private static let ok = Int32(MG_OK.rawValue)

    private static func open(_ bytes: UnsafePointer<UInt8>, _ count: Int, maxSingleAllocation: UInt64) throws
        -> OpaquePointer
    {
        var error = mg_error()
        var file: OpaquePointer?
        guard mg_tiff_open(bytes, count, maxSingleAllocation, &file, &error) == ok, let file else {
            throw CodecBridge.decodingError(error, format: .tiff)
        }
        return file
    }

    private static func pageInfo(_ file: OpaquePointer, _ index: Int) throws -> mg_tiff_page {
        var error = mg_error()
        var page = mg_tiff_page()
        guard mg_tiff_page_info(file, UInt32(index), &page, &error) == ok else {
            throw CodecBridge.decodingError(error, format: .tiff)
        }
        return page
    }

    /// The directories of the pages to decode, checked against the limits before any pixels exist: the page count,
    /// each page's size, and all frames together (each frame takes the first page's size).
    private static func pageInfos(_ file: OpaquePointer, options: ImageDecodingOptions) throws -> [mg_tiff_page] {
        let limits = options.limits
        let wanted = options.onlyFirstFrame ? 1 : Int(mg_tiff_page_count(file))
        guard wanted <= max(1, limits.maxFrameCount) else {
            throw tooLarge("the file has \(wanted) pages, limit is \(limits.maxFrameCount) frames")
        }
        let pages = try (0..<wanted).map { try pageInfo(file, $0) }
        for (index, page) in pages.enumerated() {
            let pixels = UInt64(page.width) * UInt64(page.height)
            guard pixels <= UInt64(max(1, limits.maxPixelsPerFrame)) else {
                throw tooLarge("page \(index + 1) is \(page.width)x\(page.height), limit is \(limits.maxPixelsPerFrame) pixels")
            }
        }
        let first = UInt64(pages[0].width) * UInt64(pages[0].height) * 4
        guard first * UInt64(wanted) <= UInt64(max(1, limits.maxTotalBytes)) else {
            throw tooLarge("\(wanted) frames of \(pages[0].width)x\(pages[0].height) need \(first * UInt64(wanted)) bytes, limit is \(limits.maxTotalBytes) bytes")
        }
        return pages
    }

    private static func tooLarge(_ message: String) -> MagpieError {
        .decodingFailed(reason: .tooLarge(.tiff, message: message))
    }

    private static func displaySize(of page: mg_tiff_page, options: ImageDecodingOptions) -> PixelSize {
        let swaps = options.appliesOrientation && (ImageOrientation(rawValue: Int(page.orientation))?.swapsDimensions ?? false)
        return swaps
            ? PixelSize(width: Int(page.height), height: Int(page.width))
            : PixelSize(width: Int(page.width), height: Int(page.height))
    }

    /// `icc` when it is a CMYK profile (the only kind the decoder converts itself).
    private static func cmykProfile(_ icc: Data) -> Data? {
        ColorProfile(iccData: icc).colorModel == .cmyk ? icc : nil
    }

    /// Replaces the colour of `pixels` (alpha kept) by `samples` converted through `profile`; false when lcms2
    /// refused the profile and the formula's colours stay.
    private static func convert(_ samples: UnsafeMutablePointer<UInt8>, profile: Data, into pixels: inout PixelBuffer)
        -> Bool
    {
        let count = pixels.width * pixels.height
        var converted = [UInt8](repeating: 0, count: count * 4)
        let ok = converted.withUnsafeMutableBufferPointer { output in
            ColorConverter.convertCMYK(
                samples, inverted: false, iccProfile: profile, into: output.baseAddress!, pixelCount: count)
        }
        guard ok else { return false }
        pixels.withUnsafeMutableBytes { raw in
            for i in 0..<count {
                raw[i * 4] = converted[i * 4]
                raw[i * 4 + 1] = converted[i * 4 + 1]
                raw[i * 4 + 2] = converted[i * 4 + 2]
            }
        }
        return true
    }

    /// `pixels` at the top-left corner of a transparent canvas of `size`, cropped where they are larger.
    private static func placed(_ pixels: PixelBuffer, on size: PixelSize) throws -> PixelBuffer {
        var canvas = try PixelBuffer(width: size.width, height: size.height)
        let rows = min(size.height, pixels.height), rowBytes = min(size.width, pixels.width) * 4
        pixels.withUnsafeBytes { source in
            canvas.withUnsafeMutableBytes { destination in
                for y in 0..<rows {
                    let from = source.baseAddress! + y * pixels.width * 4
                    (destination.baseAddress! + y * size.width * 4).copyMemory(from: from, byteCount: rowBytes)
                }
            }
        }
        return canvas
    }
}
