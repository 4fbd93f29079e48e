#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The set of coders Magpie decodes and encodes with (SDWebImage's coders manager idea).
///
/// Decoding sniffs the format from the bytes and asks the coders, most recently
/// registered first, which one takes the data; so a registered coder overrides a
/// built-in one for the same format.
public final class ImageCoderRegistry: Sendable {
    private let coders: Mutex<[any ImageCoder]>
    /// Each format's traits once asked for, until the coders change: a server asks for a MIME type on every answer,
    /// memory hits included, and a coder builds its traits anew each time.
    let traitsCache = Mutex<[ImageFormat: FormatTraits]>([:])

    /// The registry used when none is given, holding the built-in coders (``builtInCoders``).
    public static let shared = ImageCoderRegistry()

    /// A registry holding `coders`, or the built-in ones when nil.
    ///
    /// - Parameter coders: The coders, highest precedence first; nil (the default) for ``builtInCoders``.
    ///   An empty array gives a registry that decodes nothing until coders are registered.
    public init(coders: [any ImageCoder]? = nil) {
        self.coders = Mutex(coders ?? Self.builtInCoders)
    }

    /// New instances of the built-in coders: ``JPEGCoder``, ``PNGCoder`` (PNG and APNG), ``GIFCoder``, ``WebPCoder``,
    /// ``HEIFCoder`` (decode only), ``AVIFCoder``, ``JXLCoder``, ``BMPCoder``, ``TIFFCoder``, ``ICOCoder`` (ICO and
    /// CUR), ``SVGCoder`` (the last four decode only). Their order is the order formats are listed in.
    public static var builtInCoders: [any ImageCoder] {
        [
            JPEGCoder(), PNGCoder(), GIFCoder(), WebPCoder(), HEIFCoder(), AVIFCoder(), JXLCoder(), BMPCoder(),
            TIFFCoder(), ICOCoder(), SVGCoder(),
        ]
    }

    /// One built-in coder per format, asked for a format's facts when no registered coder states them: sniffing
    /// knows a HEIC file for what it is even in a registry without a HEIF decoder.
    static let builtInCoderList: [any ImageCoder] = builtInCoders

    /// ``builtInCoderList`` by format.
    static let builtInCoderByFormat: [ImageFormat: any ImageCoder] = Dictionary(
        builtInCoderList.map { ($0.format, $0) }, uniquingKeysWith: { first, _ in first })

    /// Adds `coder`, taking precedence over those already registered (including a built-in coder for the same format).
    ///
    /// - Parameter coder: The coder to add; registering an instance twice lists it twice.
    public func register(_ coder: any ImageCoder) {
        coders.withLock { $0.insert(coder, at: 0) }
        traitsCache.withLock { $0.removeAll() }
    }

    /// Removes every coder for `format`, built-in ones included.
    ///
    /// - Parameter format: The format whose coders go; nothing happens when there are none.
    public func unregisterCoders(for format: ImageFormat) {
        coders.withLock { $0.removeAll { $0.format == format } }
        traitsCache.withLock { $0.removeAll() }
    }

    /// The registered coders, highest precedence first.
    public var allCoders: [any ImageCoder] { coders.withLock { $0 } }

    /// The formats some registered coder decodes, in ``knownFormats``' order. The one list of what Magpie reads: the
    /// CLI's `info` and `convert` and the pipeline ask here, never a list of their own.
    public var decodableFormats: [ImageFormat] {
        let formats = Set(allCoders.map(\.format))
        return knownFormats.filter(formats.contains)
    }

    /// The formats some registered coder encodes (``ImageCoder/canEncode``), in ``knownFormats``' order.
    public var encodableFormats: [ImageFormat] {
        let formats = Set(allCoders.filter(\.canEncode).map(\.format))
        return knownFormats.filter(formats.contains)
    }

    /// Whether a registered coder decodes `format`.
    ///
    /// - Parameter format: The format to ask about.
    public func canDecode(_ format: ImageFormat) -> Bool {
        format != .unknown && allCoders.contains { $0.format == format }
    }

    /// Whether a registered coder encodes `format`.
    ///
    /// - Parameter format: The format to ask about.
    public func canEncode(_ format: ImageFormat) -> Bool {
        format != .unknown && allCoders.contains { $0.format == format && $0.canEncode }
    }

    /// Decodes `data` with the first coder whose ``ImageCoder/canDecode(_:)`` accepts it.
    ///
    /// - Parameters:
    ///   - data: The complete encoded image.
    ///   - options: How to decode; ``ImageDecodingOptions/default`` decodes all frames at full size.
    /// - Returns: The decoded image.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with
    ///   ``MagpieError/DecodingFailureReason/emptyData``,
    ///   ``MagpieError/DecodingFailureReason/unknownFormat(leadingBytes:)``,
    ///   ``MagpieError/DecodingFailureReason/unsupportedFormat(_:detail:)`` when the format is known but no coder
    ///   takes it, or the coder's own reason (corrupt, truncated, too large, out of memory).
    public func decode(_ data: Data, options: ImageDecodingOptions = .default) throws -> Image {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        if let coder = allCoders.first(where: { $0.canDecode(data) }) {
            var image = try coder.decode(data, options: options)
            Self.convert(&image, options)
            return image
        }
        throw noCoder(for: data)
    }

    /// Decodes the image file at `path` with the first coder whose ``ImageCoder/canDecode(_:)`` accepts its leading
    /// bytes. The JPEG coder reads the file as it decodes, so a large JPEG made into a thumbnail is never held whole
    /// in memory; other coders read it whole first.
    ///
    /// - Parameters:
    ///   - path: A regular file.
    ///   - options: As for ``decode(_:options:)``.
    /// - Returns: The same image as ``decode(_:options:)`` on the file's bytes.
    /// - Throws: What ``decode(_:options:)`` throws, and
    ///   ``MagpieError/DecodingFailureReason/unreadableFile(path:message:)`` when the file is missing, unreadable or
    ///   not a regular file.
    public func decode(contentsOfFile path: String, options: ImageDecodingOptions = .default) throws -> Image {
        let file = try ImageFile(path: path)
        guard !file.leadingBytes.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        if let coder = allCoders.first(where: { $0.canDecode(file.leadingBytes) }) {
            var image = try coder.decode(file, options: options)
            Self.convert(&image, options)
            return image
        }
        // Coders recognise their format from the leading bytes (sniffing reads at most 1024, or 1024 inflated from a
        // gzip start), so a file that no coder takes is not read on: it may be anything, of any size.
        throw noCoder(for: file.leadingBytes)
    }

    /// One place converts what a coder reports as stored. A coder may convert while decoding and then reports no
    /// profile: CMYK, which must be converted from its samples, and JPEG, whose rows are converted beside the
    /// decoding. In place: the decoder's pixels are referenced only here.
    private static func convert(_ image: inout Image, _ options: ImageDecodingOptions) {
        if options.colorSpace == .sRGB { ColorConverter.convertToSRGB(&image) }
    }

    private func noCoder(for data: Data) -> MagpieError {
        let format = format(of: data)
        if format == .unknown { return .decodingFailed(reason: .unknownFormat(leadingBytesOf: data)) }
        return .decodingFailed(reason: .unsupportedFormat(format, detail: "no registered decoder"))
    }

    /// Encodes `image` as `format` with the first coder for that format whose ``ImageCoder/canEncode`` is true.
    ///
    /// - Parameters:
    ///   - image: The image to write; animated images keep their frames when the format animates.
    ///   - format: The output format.
    ///   - options: Encoder settings; ``ImageEncodingOptions/default`` is quality 85, lossy, white background.
    /// - Returns: The encoded file's bytes.
    /// - Throws: ``MagpieError/encodingFailed(reason:)`` with
    ///   ``MagpieError/EncodingFailureReason/unsupportedFormat(_:)`` when no coder writes `format`,
    ///   ``MagpieError/EncodingFailureReason/sizeNotEncodable(_:size:limit:)`` when the format cannot hold the image's
    ///   size, or the coder's own reason (an invalid option, an encoder error).
    ///
    /// Colour: the profile is embedded when the coder can (``ImageCoder/embedsColorProfile``); otherwise, and for
    /// ``ImageEncodingOptions/MetadataPolicy/strip``, the pixels are converted to sRGB first.
    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions = .default) throws -> Data {
        guard let coder = allCoders.first(where: { $0.format == format && $0.canEncode }) else {
            throw MagpieError.encodingFailed(reason: .unsupportedFormat(format))
        }
        if let limit = coder.largestEncodableSize, image.width > limit.width || image.height > limit.height {
            throw MagpieError.encodingFailed(reason: .sizeNotEncodable(format, size: image.pixelSize, limit: limit))
        }
        return try coder.encode(Self.prepared(image, for: coder, options: options), options: options)
    }

    /// ``encode(_:as:options:)``, stopping early once `isCancelled` answers true: the built-in JPEG, PNG, GIF and WebP
    /// encoders ask it between rows, AVIF between frames (a large image takes seconds to write, and a server whose
    /// deadline has passed wants its worker back). Call it on the thread that does the work (a
    /// ``BoundedExecutor`` job): the check is the calling thread's.
    ///
    /// - Throws: As ``encode(_:as:options:)``, and ``MagpieError/ProcessingFailureReason/cancelled`` when stopped.
    public func encode(
        _ image: Image, as format: ImageFormat, options: ImageEncodingOptions = .default,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws -> Data {
        if isCancelled() { throw MagpieError.processingFailed(reason: .cancelled) }
        return try CodecBridge.withCancellationCheck(isCancelled) { try encode(image, as: format, options: options) }
    }

    /// `image` ready for `coder`: converted to sRGB (profile dropped) when stripping, when the coder cannot embed a
    /// profile, or when the profile is gray or CMYK (encoders write RGB samples); metadata dropped unless kept (but for
    /// the EXIF copyright and artist with ``ImageEncodingOptions/keepsCopyright``).
    static func prepared(_ image: Image, for coder: any ImageCoder, options: ImageEncodingOptions) -> Image {
        var prepared = image
        if let profile = image.colorProfile,
            options.metadata == .strip || !coder.embedsColorProfile || profile.colorModel != .rgb
        {
            prepared = ColorConverter.convertedToSRGB(prepared)
            // Whatever could not be converted (HDR transfer, an unreadable profile, CMYK already turned into RGB)
            // is not described by the profile any more either.
            prepared.colorProfile = nil
        }
        switch options.metadata {
        case .keep: break
        // EncodedMetadata.exif cuts the EXIF down to its copyright: one place for that rule, and one parse.
        case .none where options.keepsCopyright: break
        case .none, .strip: prepared.metadata = .none
        }
        return prepared
    }
}
