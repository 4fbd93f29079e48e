#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads and/or writes one image format, and says what the format is. Register your own with
/// ``ImageCoderRegistry/register(_:)`` on ``ImageCoderRegistry/shared`` to add a format or replace a built-in coder.
///
/// A coder for a new format declares its magic bytes (``recognizes(_:)``), its facts (``traits``) and, when it can,
/// its header reader (``header(of:)``); the registry then sniffs, names, types, negotiates and lists the format
/// everywhere, with no other code to change.
///
/// Coders must be thread-safe: one instance decodes on many tasks at once.
/// Every failure is thrown as a ``MagpieError``.
public protocol ImageCoder: Sendable {
    /// The format this coder handles.
    var format: ImageFormat { get }
    /// What the format is: names, MIME type, extensions, alpha, animation, default quality and `Accept` negotiation.
    /// By default the built-in coder's traits for the same format, or ``FormatTraits/generic(_:)``. A registry asks once
    /// and remembers the answer until its coders change, so it must not vary.
    var traits: FormatTraits { get }
    /// Whether `leadingBytes` start a file in ``format``: its magic bytes. Sniffing (``ImageFormat/init(sniffing:)``)
    /// asks every coder in turn, so it looks at as few bytes as it can. By default the built-in coder's answer for the
    /// same format, or false.
    ///
    /// - Parameter leadingBytes: The start of the data (at least what is there, up to the whole file).
    func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool
    /// Reads what the header declares (format, size, frames) without decoding pixels or checking limits. By default
    /// the built-in coder's reader for the same format; for a format without one it throws
    /// ``MagpieError/DecodingFailureReason/unsupportedFormat(_:detail:)``.
    ///
    /// - Parameter data: The file's bytes (for a frame count, the whole file).
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `truncatedData`, `corruptData` or `unsupportedFormat`.
    func header(of data: Data) throws -> ImageHeader
    /// Whether this coder can decode `data`; by default, whether it ``recognizes(_:)`` the leading bytes.
    ///
    /// Called for every decode, so it should only look at the leading bytes; for a file
    /// (``ImageCoderRegistry/decode(contentsOfFile:options:)``) it gets the first 64 KiB only.
    /// - Parameter data: The complete encoded image, or the start of a file.
    /// - Returns: True when ``decode(_:options:)`` should be given `data`.
    func canDecode(_ data: Data) -> Bool
    /// Decodes `data` into an image, honouring `options` (limits, target size, frames).
    ///
    /// - Parameters:
    ///   - data: The complete encoded image.
    ///   - options: Target size, first-frame-only, scale, orientation and the
    ///     ``ImageDecodingLimits`` to enforce before allocating.
    /// - Returns: The decoded image, at least one frame.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` for data this coder cannot turn into an image.
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image
    /// Decodes the image in `file`, as ``decode(_:options:)`` decodes its bytes; by default it reads the whole file
    /// and calls that. A coder that can read as it decodes overrides it so a large file is never held whole.
    ///
    /// - Parameters:
    ///   - file: An open file whose ``ImageFile/leadingBytes`` this coder accepted (``canDecode(_:)``).
    ///   - options: As for ``decode(_:options:)``.
    /// - Returns: The decoded image, the same as from the file's bytes.
    /// - Throws: ``MagpieError/decodingFailed(reason:)``, with
    ///   ``MagpieError/DecodingFailureReason/unreadableFile(path:message:)`` when the file cannot be read.
    func decode(_ file: ImageFile, options: ImageDecodingOptions) throws -> Image
    /// Whether ``encode(_:options:)`` is implemented; false by default.
    var canEncode: Bool { get }
    /// The largest width and height ``encode(_:options:)`` can write, or nil when the format sets no limit below what
    /// memory allows; nil by default. ``ImageCoderRegistry/encode(_:as:options:)`` refuses larger images with
    /// ``MagpieError/EncodingFailureReason/sizeNotEncodable(_:size:limit:)`` before calling the encoder.
    var largestEncodableSize: PixelSize? { get }
    /// Whether ``encode(_:options:)`` embeds ``Image/colorProfile`` in the file; false by default, and then the
    /// registry converts the pixels to sRGB before encoding, so colours never silently change.
    var embedsColorProfile: Bool { get }
    /// Encodes `image` (all frames when the format animates).
    ///
    /// - Parameters:
    ///   - image: The image to write.
    ///   - options: Quality, lossless, background and first-frame-only settings.
    /// - Returns: The encoded file's bytes.
    /// - Throws: ``MagpieError/encodingFailed(reason:)``; the default implementation always throws
    ///   ``MagpieError/EncodingFailureReason/unsupportedFormat(_:)``.
    func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data
}

extension ImageCoder {
    /// The built-in coder's traits for ``format``, or ``FormatTraits/generic(_:)``.
    public var traits: FormatTraits { ImageCoderRegistry.builtInCoderByFormat[format]?.traits ?? .generic(format) }
    /// The built-in coder's answer for ``format``; false for a format Magpie does not know.
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        ImageCoderRegistry.builtInCoderByFormat[format]?.recognizes(leadingBytes) ?? false
    }
    /// The built-in coder's header reader for ``format``; for another format, throws
    /// ``MagpieError/DecodingFailureReason/unsupportedFormat(_:detail:)``.
    public func header(of data: Data) throws -> ImageHeader {
        guard let builtIn = ImageCoderRegistry.builtInCoderByFormat[format] else {
            throw MagpieError.decodingFailed(reason: .unsupportedFormat(format, detail: "its coder reads no header"))
        }
        return try builtIn.header(of: data)
    }
    /// True when ``recognizes(_:)`` accepts the leading bytes of `data`.
    public func canDecode(_ data: Data) -> Bool { data.withUnsafeBytes { recognizes($0) } }
    /// Reads the whole file and decodes its bytes with ``decode(_:options:)``.
    public func decode(_ file: ImageFile, options: ImageDecodingOptions) throws -> Image {
        try decode(file.readAll(), options: options)
    }
    /// False: coders that only decode need not implement encoding.
    public var canEncode: Bool { false }
    /// Nil: no limit of the format's own.
    public var largestEncodableSize: PixelSize? { nil }
    /// False: the registry hands such a coder sRGB pixels.
    public var embedsColorProfile: Bool { false }
    /// Always throws ``MagpieError/encodingFailed(reason:)`` with
    /// ``MagpieError/EncodingFailureReason/unsupportedFormat(_:)``.
    public func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        throw MagpieError.encodingFailed(reason: .unsupportedFormat(format))
    }
}
