#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Image: MagpieCompatibleValue {}

/// Kingfisher's encoding shorthands on `image.mg`, through ``ImageCoderRegistry/shared``. They return nil when the
/// encoder fails, as Kingfisher's do; call ``ImageCoderRegistry/encode(_:as:options:)`` for the error.
extension MagpieWrapper where Base == Image {
    /// The image as PNG (APNG when it has several frames); nil when encoding fails.
    public func pngRepresentation() -> Data? { data(format: .png) }

    /// The image as JPEG at `compressionQuality` (0...1, as in Kingfisher; mapped to quality 1...100).
    ///
    /// - Parameter compressionQuality: 0 (smallest) to 1 (best); values outside are clamped.
    /// - Returns: The JPEG bytes, or nil when encoding fails.
    public func jpegRepresentation(compressionQuality: Double) -> Data? {
        data(format: .jpeg, compressionQuality: compressionQuality)
    }

    /// The image as GIF (animated when it has several frames); nil when encoding fails.
    public func gifRepresentation() -> Data? { data(format: .gif) }

    /// The image as WebP: lossy at `compressionQuality` (0...1), or lossless.
    ///
    /// - Parameters:
    ///   - compressionQuality: 0 (smallest) to 1 (best) for lossy encoding; default 0.85.
    ///   - lossless: True for lossless WebP (the quality is then ignored).
    /// - Returns: The WebP bytes, or nil when encoding fails.
    public func webpRepresentation(compressionQuality: Double = 0.85, lossless: Bool = false) -> Data? {
        var options = ImageEncodingOptions.default
        options.quality = Self.quality(compressionQuality)
        options.lossless = lossless
        return try? ImageCoderRegistry.shared.encode(base, as: .webp, options: options)
    }

    /// The image in `format` at `compressionQuality` (0...1, used by lossy formats), as Kingfisher's `data(format:)`.
    ///
    /// - Parameters:
    ///   - format: The output format; one the registry can encode (``ImageCoderRegistry/encodableFormats``).
    ///   - compressionQuality: 0 (smallest) to 1 (best); default 1.
    /// - Returns: The encoded bytes, or nil when the format has no encoder or encoding fails.
    public func data(format: ImageFormat, compressionQuality: Double = 1) -> Data? {
        var options = ImageEncodingOptions.default
        options.quality = Self.quality(compressionQuality)
        return try? ImageCoderRegistry.shared.encode(base, as: format, options: options)
    }

    /// Kingfisher's 0...1 compression quality as the encoders' 1...100.
    static func quality(_ compressionQuality: Double) -> Int {
        guard compressionQuality.isFinite else { return 100 }
        return max(1, Int((min(1, max(0, compressionQuality)) * 100).rounded()))
    }
}
