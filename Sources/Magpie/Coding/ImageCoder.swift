#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads and/or writes one image format. Register your own with
/// `ImageCoderRegistry.shared.register(_:)` to add a format or replace a built-in coder.
///
/// Coders must be thread-safe: one instance decodes on many tasks at once.
/// Every failure is thrown as a `MagpieError`.
public protocol ImageCoder: Sendable {
    /// The format this coder handles.
    var format: ImageFormat { get }
    /// Whether this coder can decode `data`; by default, whether the sniffed format is `format`.
    func canDecode(_ data: Data) -> Bool
    /// Decodes `data` into an image, honouring `options` (limits, target size, frames).
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image
    /// Whether `encode` is implemented.
    var canEncode: Bool { get }
    /// Encodes `image` (all frames when the format animates).
    func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data
}

extension ImageCoder {
    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == format }
    public var canEncode: Bool { false }
    public func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        throw MagpieError.encodingFailed(reason: .unsupportedFormat(format))
    }
}
