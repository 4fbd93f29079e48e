import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// WebP coder (libwebp): lossy, lossless, alpha and animated WebP, both ways.
///
/// Decoding
/// - Still images come out as straight-alpha RGBA. With ``ImageDecodingOptions/targetSize`` set, a still
///   image is decoded by libwebp's scaler straight to the smallest size that still fits
///   (or fills, per ``ImageDecodingOptions/contentMode``) the target, when that is smaller than the
///   stored size, so large images never exist at full size in memory.
///   Animations ignore `targetSize`: libwebp's animation decoder cannot scale.
/// - Animations are composited by libwebp onto a transparent canvas; each frame is
///   the full canvas with its stored duration, and ``Image/loopCount`` is the ANIM chunk's
///   value (0 = forever).
/// - The EXIF orientation of the `EXIF` chunk is applied to every frame when
///   ``ImageDecodingOptions/appliesOrientation`` is set.
/// - Files must be complete: a file shorter than its RIFF header declares, or whose
///   last chunk is cut, throws `truncatedData`, even when the frames before the cut
///   could be shown.
///
/// Encoding
/// - Lossy at ``ImageEncodingOptions/quality`` (1...100), or lossless when ``ImageEncodingOptions/lossless``
///   is set; lossless keeps
///   the colour of fully transparent pixels, so it round-trips pixel for pixel.
/// - Images with several frames become an animation (unless ``ImageEncodingOptions/onlyFirstFrame``), with
///   each frame's duration rounded to milliseconds and the image's `loopCount`
///   (nil, "play once", is written as 1). libwebp's animation encoder folds a frame
///   identical to the one before it into that frame's duration.
public struct WebPCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/webp``.
    public var format: ImageFormat { .webp }
    /// WebP: `image/webp`, `webp`, alpha, animations written, quality 79, chosen when `Accept` names it (rank 1).
    public var traits: FormatTraits {
        FormatTraits(
            displayName: "WebP", mimeType: "image/webp", fileExtensions: ["webp"], supportsAlpha: true, animatesOnEncode: true,
            defaultQuality: 79, negotiation: .whenAccepted(rank: 1))
    }
    /// A RIFF container of form `WEBP`.
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        leadingBytes.hasASCII("RIFF") && leadingBytes.hasASCII("WEBP", at: 8)
    }
    /// The first chunk's size (VP8, VP8L or VP8X); an animation's frame count from its ANMF chunks.
    public func header(of data: Data) throws -> ImageHeader { try HeaderBytes.read(data, format: .webp) { $0.webp() } }

    /// Always true: WebP encoding is implemented.
    public var canEncode: Bool { true }
    /// WebP stores each side in 14 bits (WEBP_MAX_DIMENSION).
    public var largestEncodableSize: PixelSize? { PixelSize(width: 16_383, height: 16_383) }

    /// Decodes a complete WebP file; see the type's documentation for the rules.
    ///
    /// - Parameters:
    ///   - data: A complete WebP file.
    ///   - options: Target size (stills only), first-frame-only, scale, orientation and limits.
    /// - Returns: The image with format ``ImageFormat/webp``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `emptyData`, `truncatedData`,
    ///   `corruptData`, `tooLarge` (checked before allocating), `unsupportedFormat`
    ///   or `outOfMemory`.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        return try CodecBridge.withBytes(of: data) { bytes, count in
            var error = mg_error()
            var info = mg_webp_info()
            var exif = mg_buffer()
            var limits = CodecBridge.limits(options)
            guard Self.succeeded(mg_webp_probe(bytes, count, &limits, &info, &exif, &error)) else {
                throw CodecBridge.decodingError(error, format: .webp)
            }
            let exifPayload = CodecBridge.data(adopting: exif)
            let orientation =
                options.appliesOrientation && !exifPayload.isEmpty
                ? ImageOrientation(exifPayload: exifPayload) : .up

            var decodeOptions = mg_webp_decode_options(
                scaled_width: 0, scaled_height: 0, only_first_frame: options.onlyFirstFrame ? 1 : 0)
            if info.is_animated == 0, let scaled = Self.scaledSize(info: info, orientation: orientation, options: options) {
                decodeOptions.scaled_width = UInt32(scaled.width)
                decodeOptions.scaled_height = UInt32(scaled.height)
            }

            var decoded = mg_webp_image()
            defer { mg_webp_image_release(&decoded) }
            guard Self.succeeded(mg_webp_decode(bytes, count, &limits, &decodeOptions, &decoded, &error)) else {
                throw CodecBridge.decodingError(error, format: .webp)
            }

            var frames: [ImageFrame] = []
            frames.reserveCapacity(Int(decoded.frame_count))
            for index in 0..<Int(decoded.frame_count) {
                let bitmap = decoded.frames[index]
                // Ownership moves to Swift; the release in `defer` must skip this one.
                decoded.frames[index].pixels = nil
                let pixels = try orientation.apply(to: CodecBridge.pixels(adopting: bitmap))
                let duration: Duration =
                    decoded.is_animated != 0 ? .milliseconds(Int(decoded.durations_ms[index])) : .zero
                frames.append(ImageFrame(pixels: pixels, duration: duration))
            }
            let (embedded, sourceInfo) = WebPMetadataChunks.read(data)
            var image = try Image(
                frames: frames,
                loopCount: decoded.is_animated != 0 ? Int(decoded.loop_count) : nil,
                format: .webp,
                scale: options.scale)
            image = embedded.applied(to: image)
            image.sourceInfo = sourceInfo
            return image
        }
    }

    /// Encodes `image` as WebP: a still image, or an animation when it has several
    /// frames and `options.onlyFirstFrame` is false.
    ///
    /// - Parameters:
    ///   - image: The image to write.
    ///   - options: ``ImageEncodingOptions/quality`` (lossy only), ``ImageEncodingOptions/lossless`` and
    ///     ``ImageEncodingOptions/onlyFirstFrame``.
    /// - Returns: The WebP file's bytes.
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` with `invalidOption` for a lossy quality
    ///   outside 1...100, or `encoderFailed` carrying libwebp's `WebPEncodingError`
    ///   name (for example a side longer than 16383 pixels).
    public func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        // Lossless effort is fixed at libwebp's default, so quality only matters (and is only validated) for lossy.
        let quality: Float = options.lossless ? 75 : Float(try options.validatedQuality())
        var encodeOptions = mg_webp_encode_options(
            lossless: options.lossless ? 1 : 0,
            quality: quality,
            loop_count: UInt32(clamping: min(max(image.loopCount ?? 1, 0), 0xFFFF)))
        var error = mg_error()
        var output = mg_buffer()
        let width = UInt32(image.width), height = UInt32(image.height)
        let status: Int32
        if image.frames.count > 1 && !options.onlyFirstFrame {
            // Frame storage is malloc'd and stays put while `image` is alive, so raw pointers are safe here.
            status = withExtendedLifetime(image) {
                let frames = image.frames.map { frame in
                    mg_webp_frame(
                        rgba: UnsafePointer(frame.pixels.storage.bytes),
                        duration_ms: Self.milliseconds(frame.duration))
                }
                return mg_webp_encode_animation(
                    frames, UInt32(frames.count), width, height, &encodeOptions, &output, &error)
            }
        } else {
            status = image.frames[0].pixels.withUnsafeBytes { raw in
                mg_webp_encode(
                    raw.baseAddress!.assumingMemoryBound(to: UInt8.self), width, height, &encodeOptions, &output,
                    &error)
            }
        }
        guard Self.succeeded(status) else { throw CodecBridge.encodingError(error, format: .webp) }
        let embedded = EncodedMetadata(image, options)
        return try WebPMetadataChunks.inserting(
            icc: embedded.icc, exif: embedded.exif, xmp: embedded.xmp, into: CodecBridge.data(adopting: output))
    }

    /// True: WebP carries an ICC profile in its `ICCP` chunk.
    public var embedsColorProfile: Bool { true }

    private static func succeeded(_ status: Int32) -> Bool { status == Int32(MG_OK.rawValue) }

    /// The stored-orientation size to decode a still image at, or nil for full size.
    /// `requiredSize` works in display orientation, so 5...8 swap before and after.
    private static func scaledSize(
        info: mg_webp_info, orientation: ImageOrientation, options: ImageDecodingOptions
    ) -> PixelSize? {
        let stored = PixelSize(width: Int(info.canvas_width), height: Int(info.canvas_height))
        guard stored.width > 0, stored.height > 0 else { return nil }
        let swaps = orientation.swapsDimensions
        let display = swaps ? PixelSize(width: stored.height, height: stored.width) : stored
        guard let required = options.requiredSize(forImageOf: display) else { return nil }
        let scaled = swaps ? PixelSize(width: required.height, height: required.width) : required
        guard scaled.width <= stored.width, scaled.height <= stored.height,
            scaled.width < stored.width || scaled.height < stored.height
        else { return nil }
        return scaled
    }

    /// `duration` in whole milliseconds (rounded), within the 24 bits a WebP frame stores.
    static func milliseconds(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        let ms = (Double(seconds) * 1000 + Double(attoseconds) / 1e15).rounded()
        guard ms > 0 else { return 0 }
        return UInt32(min(ms, Double(0xFF_FFFF)))
    }
}
