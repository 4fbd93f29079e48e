#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads and/or writes one image format. Register your own with
/// ``ImageCoderRegistry/register(_:)`` on ``ImageCoderRegistry/shared`` to add a format or replace a built-in coder.
///
/// Coders must be thread-safe: one instance decodes on many tasks at once.
/// Every failure is thrown as a ``MagpieError``.
public protocol ImageCoder: Sendable {
    /// The format this coder handles.
    var format: ImageFormat { get }
    /// Whether this coder can decode `data`; by default, whether the sniffed format is ``format``.
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
    /// True when ``ImageFormat/init(sniffing:)`` recognises `data` as this coder's ``format``.
    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == format }
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
