import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// GIF coder (giflib): decodes still and animated GIFs, encodes still and animated GIFs.
///
/// Decoding returns one fully composited canvas per image block of the file (GIF logical screen
/// size), starting from a transparent canvas and honouring each frame's disposal method,
/// transparency, local palette and interlacing. Delays are reported as stored (centiseconds × 10
/// ms, 0 without a control block); ``Image/loopCount`` is the NETSCAPE2.0/ANIMEXTS1.0 value, nil without one.
/// ``ImageDecodingOptions/targetSize`` is not used: GIFs always decode at full size.
///
/// Encoding writes every frame as a full-canvas image with its own palette: exact when a frame
/// has at most 256 colours, otherwise median-cut quantized with Floyd–Steinberg dithering.
/// Pixels with alpha below 128 become transparent and all others opaque (GIF has no partial alpha).
public struct GIFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/gif``.
    public var format: ImageFormat { .gif }
    /// GIF: `image/gif`, `gif`, alpha (one transparent index), animations written, no quality, always negotiable.
    public var traits: FormatTraits {
        FormatTraits(
            displayName: "GIF", mimeType: "image/gif", fileExtensions: ["gif"], supportsAlpha: true, animatesOnEncode: true,
            negotiation: .universal)
    }
    /// `GIF87a` or `GIF89a`.
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        leadingBytes.hasASCII("GIF87a") || leadingBytes.hasASCII("GIF89a")
    }
    /// The logical screen's size; the frame count when the walk over every block reaches the trailer.
    public func header(of data: Data) throws -> ImageHeader { try HeaderBytes.read(data, format: .gif) { $0.gif() } }

    /// Always true: GIF encoding is implemented.
    public var canEncode: Bool { true }
    /// GIF stores each side in 16 bits.
    public var largestEncodableSize: PixelSize? { PixelSize(width: 65_535, height: 65_535) }

    /// Decodes a GIF into one full-canvas frame per image block (only the first with
    /// ``ImageDecodingOptions/onlyFirstFrame``).
    ///
    /// - Parameters:
    ///   - data: A complete GIF file.
    ///   - options: First-frame-only, scale and limits.
    /// - Returns: The image with format ``ImageFormat/gif``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `tooLarge` when the canvas, an image block,
    ///   the frame count or the total frame memory exceeds `options.limits` (checked before allocating),
    ///   `truncatedData` when the data ends inside the file, and `corruptData` for malformed data.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        var limits = CodecBridge.limits(options)
        var error = mg_error()
        return try CodecBridge.withBytes(of: data) { bytes, count in
            guard let decoder = mg_gif_decoder_open(bytes, count, &limits, &error) else {
                throw CodecBridge.decodingError(error, format: .gif)
            }
            defer { mg_gif_decoder_close(decoder) }
            var frames: [ImageFrame] = []
            while true {
                var bitmap = mg_bitmap()
                var delay: UInt32 = 0
                guard mg_gif_decoder_next_frame(decoder, &bitmap, &delay, &error) == Int32(MG_OK.rawValue) else {
                    throw CodecBridge.decodingError(error, format: .gif)
                }
                guard bitmap.pixels != nil else { break }
                frames.append(
                    ImageFrame(pixels: CodecBridge.pixels(adopting: bitmap), duration: .milliseconds(Int(delay))))
                if options.onlyFirstFrame { break }
            }
            let loop = mg_gif_decoder_loop_count(decoder)
            let (embedded, info) = GIFExtensions.read(data)
            var image = try Image(frames: frames, loopCount: loop < 0 ? nil : Int(loop), format: .gif, scale: options.scale)
            image = embedded.applied(to: image)
            image.sourceInfo = info
            return image
        }
    }

    /// Encodes all frames (only the first with `options.onlyFirstFrame`) as a GIF89a. Animated
    /// images get a NETSCAPE2.0 loop block when ``Image/loopCount`` is set, and each frame a delay of
    /// its duration rounded to centiseconds (at most 655.35 s).
    ///
    /// - Parameters:
    ///   - image: The image to write; colours are reduced to 256 per frame when needed.
    ///   - options: Only ``ImageEncodingOptions/onlyFirstFrame`` is used.
    /// - Returns: The GIF file's bytes.
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` with `encoderFailed` carrying giflib's message.
    public func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        let frames = options.onlyFirstFrame ? [image.frames[0]] : image.frames
        let width = image.width, height = image.height
        guard width <= 65535, height <= 65535 else {
            throw MagpieError.encodingFailed(
                reason: .encoderFailed(.gif, message: "GIF cannot store a \(width)x\(height) image (65535 px per side at most)"))
        }
        let pixelCount = width * height
        let quantizer = ColorQuantizer()
        let indices = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: pixelCount * frames.count)
        defer { indices.deallocate() }
        var palettes: [ColorQuantizer.Palette] = []
        palettes.reserveCapacity(frames.count)
        for (i, frame) in frames.enumerated() {
            let slice = UnsafeMutableBufferPointer(rebasing: indices[i * pixelCount..<(i + 1) * pixelCount])
            palettes.append(quantizer.quantize(frame.pixels, into: slice))
        }
        // All palettes side by side so that one pointer covers them while C runs.
        var allColors: [UInt8] = []
        var paletteOffsets: [Int] = []
        for palette in palettes {
            paletteOffsets.append(allColors.count)
            allColors.append(contentsOf: palette.colors)
        }
        let animated = frames.count > 1
        let loopCount: Int32 = animated ? image.loopCount.map { Int32(clamping: min(max($0, 0), 65535)) } ?? -1 : -1
        // Full-canvas frames with transparent pixels must clear the previous frame first,
        // or it would show through them.
        let restore: Int32 = animated && palettes.contains { $0.transparentIndex != nil } ? 1 : 0

        var error = mg_error()
        var buffer = mg_buffer()
        let status = allColors.withUnsafeBufferPointer { colors in
            let base = indices.baseAddress!
            let descriptions = frames.indices.map { i in
                mg_gif_frame(
                    indices: base + i * pixelCount,
                    palette: colors.baseAddress! + paletteOffsets[i],
                    palette_size: UInt32(palettes[i].count),
                    transparent_index: Int32(palettes[i].transparentIndex ?? -1),
                    delay_cs: Self.centiseconds(frames[i].duration))
            }
            return descriptions.withUnsafeBufferPointer { list in
                mg_gif_encode(
                    UInt32(width), UInt32(height), list.baseAddress, UInt32(list.count), loopCount, restore, &buffer,
                    &error)
            }
        }
        guard status == Int32(MG_OK.rawValue) else { throw CodecBridge.encodingError(error, format: .gif) }
        return CodecBridge.data(adopting: buffer)
    }

    /// A duration in whole centiseconds (GIF's delay unit), rounded, within 0...65535.
    static func centiseconds(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        let value = (Double(seconds) * 100 + Double(attoseconds) / 1e16).rounded()
        return UInt32(min(max(value, 0), 65535))
    }
}
