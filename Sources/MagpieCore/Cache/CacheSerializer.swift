#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns images into the bytes a disk cache stores, and those bytes back into images.
public protocol CacheSerializer: Sendable {
    /// The bytes to store for `image`.
    ///
    /// - Parameters:
    ///   - image: The (possibly processed) image to store.
    ///   - original: The data `image` was decoded from, when known; nil for images made in memory.
    /// - Returns: The bytes written to disk.
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` when the image cannot be encoded.
    func data(with image: Image, original: Data?) throws -> Data

    /// The image stored as `data`.
    ///
    /// - Parameters:
    ///   - data: Bytes this serializer wrote earlier (possibly by another process or version).
    ///   - options: How to decode: target size, frames, scale, limits.
    /// - Returns: The decoded image.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` when the bytes are not a decodable image.
    func image(with data: Data, options: ImageDecodingOptions) throws -> Image

    /// ``data(with:original:)`` that may stop early once `isCancelled` returns true (the built-in encoders check
    /// between rows), throwing ``MagpieError/ProcessingFailureReason/cancelled``. The default ignores `isCancelled`.
    ///
    /// - Parameters:
    ///   - image: The image to serialize.
    ///   - original: The bytes the image was decoded from, if known.
    ///   - isCancelled: Whether the caller has given up.
    func data(with image: Image, original: Data?, isCancelled: @escaping @Sendable () -> Bool) throws -> Data

    /// True when the stored bytes may be the unprocessed original rather than the processed
    /// image, so whoever reads them back must run the processors again.
    var originalDataUsed: Bool { get }
}

extension CacheSerializer {
    /// False: the stored bytes are always the image that was passed in.
    public var originalDataUsed: Bool { false }

    /// ``data(with:original:)``: a serializer that cannot stop early.
    public func data(with image: Image, original: Data?, isCancelled: @escaping @Sendable () -> Bool) throws -> Data {
        try data(with: image, original: original)
    }
}

/// The serializer used when none is given; it keeps each image in the format it came in.
///
/// `data(with:original:)` follows this rule:
/// 1. `original` given and ``preferCacheOriginalData`` → `original`, unchanged.
/// 2. Otherwise by `image.format`:
///    - PNG → PNG (APNG when animated);
///    - JPEG → JPEG at ``jpegQuality``, or PNG once processing made it translucent (rounded
///      corners): JPEG has no alpha;
///    - GIF → `original` when it is a GIF whose canvas matches the image's size (re-encoding
///      would quantize again), else a GIF encode;
///    - WebP → lossy WebP at ``jpegQuality`` (animated when the image is);
///    - anything else (built in memory, or a format Magpie cannot write) → PNG.
///
/// A GIF processed without changing its size (a tint, say) would keep its unprocessed
/// original bytes under rule 2; pass `original: nil` or use ``FormatIndicatedCacheSerializer/gif`` then.
public struct DefaultCacheSerializer: CacheSerializer {
    /// Quality 1...100 for JPEG and WebP output. Default 85.
    public var jpegQuality: Int
    /// Store `original` as is whenever it is given. Default false.
    public var preferCacheOriginalData: Bool
    /// The coders used to encode and decode. Default ``ImageCoderRegistry/shared``.
    public var registry: ImageCoderRegistry

    /// A serializer with the given settings.
    ///
    /// - Parameters:
    ///   - jpegQuality: Quality 1...100 for JPEG and WebP output; checked when encoding.
    ///   - preferCacheOriginalData: Store the original bytes whenever they are given.
    ///   - registry: The coders to use.
    public init(jpegQuality: Int = 85, preferCacheOriginalData: Bool = false, registry: ImageCoderRegistry = .shared) {
        self.jpegQuality = jpegQuality
        self.preferCacheOriginalData = preferCacheOriginalData
        self.registry = registry
    }

    /// Quality 85, re-encoding rather than keeping the original, shared registry.
    public static let `default` = DefaultCacheSerializer()

    /// Equal to ``preferCacheOriginalData``.
    public var originalDataUsed: Bool { preferCacheOriginalData }

    /// The bytes for `image` by the rule in the type's description.
    ///
    /// - Parameters:
    ///   - image: The image to store.
    ///   - original: The bytes it was decoded from, if known.
    /// - Returns: The bytes to write.
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` when encoding fails (for example a ``jpegQuality``
    ///   outside 1...100).
    public func data(with image: Image, original: Data?) throws -> Data {
        if let original, preferCacheOriginalData { return original }
        switch image.format {
        case .png:
            return try registry.encode(image, as: .png)
        case .jpeg where image.pixels.isOpaque:
            return try registry.encode(image, as: .jpeg, options: ImageEncodingOptions(quality: jpegQuality))
        case .gif:
            if let original, Self.gifCanvasSize(of: original) == image.pixelSize { return original }
            return try registry.encode(image, as: .gif)
        case .webp:
            return try registry.encode(image, as: .webp, options: ImageEncodingOptions(quality: jpegQuality))
        default:
            return try registry.encode(image, as: .png)
        }
    }

    /// Decodes `data` with ``registry``.
    ///
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` when the bytes do not decode.
    public func image(with data: Data, options: ImageDecodingOptions) throws -> Image {
        try registry.decode(data, options: options)
    }

    /// The logical screen size from a GIF header; nil when `data` is not a GIF.
    static func gifCanvasSize(of data: Data) -> PixelSize? {
        guard data.count >= 10, ImageFormat(sniffing: data) == .gif else { return nil }
        let start = data.startIndex
        func littleEndian(_ offset: Int) -> Int {
            Int(data[start + offset]) | Int(data[start + offset + 1]) << 8
        }
        return PixelSize(width: littleEndian(6), height: littleEndian(8))
    }
}

/// A serializer that always stores one format, whatever the image came in.
public struct FormatIndicatedCacheSerializer: CacheSerializer {
    /// The format written.
    public let format: ImageFormat
    /// The encoding options used.
    public let options: ImageEncodingOptions
    /// The coders used to encode and decode.
    public let registry: ImageCoderRegistry

    /// A serializer writing `format` with `options`; encoding throws when no coder writes `format`.
    ///
    /// - Parameters:
    ///   - format: The format every image is stored in.
    ///   - options: Encoder settings (default ``ImageEncodingOptions/default``).
    ///   - registry: The coders to use (default ``ImageCoderRegistry/shared``).
    public init(format: ImageFormat, options: ImageEncodingOptions = .default, registry: ImageCoderRegistry = .shared) {
        self.format = format
        self.options = options
        self.registry = registry
    }

    /// Always PNG (APNG for animations): lossless, keeps alpha.
    public static let png = FormatIndicatedCacheSerializer(format: .png)
    /// Always JPEG at quality 85; transparency is flattened onto white.
    public static let jpeg = jpeg(quality: 85)
    /// Always GIF (re-encoded, never the original bytes).
    public static let gif = FormatIndicatedCacheSerializer(format: .gif)
    /// Always lossy WebP at quality 85.
    public static let webp = webp(lossless: false, quality: 85)

    /// Always JPEG at `quality`; transparency is flattened onto white.
    ///
    /// - Parameter quality: 1...100; other values make every store fail.
    public static func jpeg(quality: Int) -> FormatIndicatedCacheSerializer {
        FormatIndicatedCacheSerializer(format: .jpeg, options: ImageEncodingOptions(quality: quality))
    }

    /// Always WebP, lossless or lossy at `quality`.
    ///
    /// - Parameters:
    ///   - lossless: Write lossless WebP.
    ///   - quality: Lossy quality 1...100 (default 85); ignored when `lossless`.
    public static func webp(lossless: Bool, quality: Int = 85) -> FormatIndicatedCacheSerializer {
        FormatIndicatedCacheSerializer(format: .webp, options: ImageEncodingOptions(quality: quality, lossless: lossless))
    }

    /// `image` encoded as ``format`` with ``options``; `original` is ignored.
    ///
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` when no coder writes ``format`` or encoding fails.
    public func data(with image: Image, original: Data?) throws -> Data {
        try registry.encode(image, as: format, options: options)
    }

    /// ``data(with:original:)``, stopping between rows once `isCancelled` returns true.
    ///
    /// - Throws: ``MagpieError/processingFailed(reason:)`` (``MagpieError/ProcessingFailureReason/cancelled``) when
    ///   stopped, or the encoder's ``MagpieError/encodingFailed(reason:)``.
    public func data(with image: Image, original: Data?, isCancelled: @escaping @Sendable () -> Bool) throws -> Data {
        try registry.encode(image, as: format, options: options, isCancelled: isCancelled)
    }

    /// Decodes `data` with ``registry``, whatever its format.
    ///
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` when the bytes do not decode.
    public func image(with data: Data, options: ImageDecodingOptions) throws -> Image {
        try registry.decode(data, options: options)
    }
}
