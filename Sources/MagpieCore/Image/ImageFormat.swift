#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image file format, identified from the data's leading bytes.
///
/// File extensions and `Content-Type` headers are never trusted over the bytes:
/// a PNG saved as `photo.jpg` is `.png`, an HTML error page served as
/// `image/jpeg` is `.unknown`.
///
/// The set is open: a coder for a new format declares it (`ImageFormat(rawValue: "qoi")`), with its magic bytes
/// (``ImageCoder/recognizes(_:)``) and its facts (``ImageCoder/traits``). Every fact below comes from the coders of
/// ``ImageCoderRegistry/shared``, so registering that coder is all it takes for the format to be sniffed, named and
/// typed everywhere.
public struct ImageFormat: RawRepresentable, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The format's short lowercase name: `jpeg`, `png`, `webp`.
    public let rawValue: String

    /// The format named `rawValue`, known to a coder or not.
    ///
    /// - Parameter rawValue: A short lowercase name, as coders declare it.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// JPEG.
    public static let jpeg = ImageFormat(rawValue: "jpeg")
    /// PNG, including APNG.
    public static let png = ImageFormat(rawValue: "png")
    /// GIF.
    public static let gif = ImageFormat(rawValue: "gif")
    /// WebP.
    public static let webp = ImageFormat(rawValue: "webp")
    /// HEIF/HEIC.
    public static let heic = ImageFormat(rawValue: "heic")
    /// AVIF.
    public static let avif = ImageFormat(rawValue: "avif")
    /// JPEG XL.
    public static let jxl = ImageFormat(rawValue: "jxl")
    /// BMP.
    public static let bmp = ImageFormat(rawValue: "bmp")
    /// TIFF and BigTIFF.
    public static let tiff = ImageFormat(rawValue: "tiff")
    /// ICO and CUR.
    public static let ico = ImageFormat(rawValue: "ico")
    /// SVG, plain or gzip-compressed.
    public static let svg = ImageFormat(rawValue: "svg")
    /// Not an image format Magpie recognises (also the format of images built in memory).
    public static let unknown = ImageFormat(rawValue: "unknown")

    /// The formats ``ImageCoderRegistry/shared`` knows: the built-in ones, then any a registered coder adds, then
    /// ``unknown``. Which of them decode or encode is the registry's to say (``ImageCoderRegistry/decodableFormats``).
    public static var allCases: [ImageFormat] { ImageCoderRegistry.shared.knownFormats + [.unknown] }

    /// Identifies the format from the first bytes of `data` by asking the coders of ``ImageCoderRegistry/shared``
    /// (``ImageCoderRegistry/format(of:)``): at most 1024 bytes are looked at, or for gzip data the first 1024
    /// inflated bytes (a gzip-compressed SVG is ``svg``).
    ///
    /// - Parameter data: The file's bytes, or at least its start.
    ///   Empty or unrecognised data gives ``unknown``.
    public init(sniffing data: Data) {
        self = ImageCoderRegistry.shared.format(of: data)
    }

    /// True for the formats the built-in coders decode (``ImageCoderRegistry/builtInCoders``).
    @available(*, deprecated, message: "ask the registry: ImageCoderRegistry.shared.canDecode(format)")
    public var isBuiltInDecodable: Bool {
        ImageCoderRegistry.builtInCoders.contains { $0.format == self }
    }

    /// What the format's coder declares (``ImageCoderRegistry/traits(for:)`` on the shared registry).
    public var traits: FormatTraits { ImageCoderRegistry.shared.traits(for: self) }

    /// The usual MIME type, for example `image/jpeg`; `application/octet-stream` for ``unknown``.
    public var mimeType: String { traits.mimeType }

    /// The usual file extension, without the dot: `jpg` for JPEG, `bin` for ``unknown``.
    public var fileExtension: String { traits.fileExtension }

    /// The format a file extension names (for choosing an output format, never for reading).
    ///
    /// - Parameter fileExtension: The extension without the dot, in any case (`JPG`, `jpeg`, `apng`, `tif`).
    ///   Nil when no coder of the shared registry lists it.
    public init?(fileExtension: String) {
        guard let format = ImageCoderRegistry.shared.format(forFileExtension: fileExtension) else { return nil }
        self = format
    }

    /// The name for messages: `JPEG`, `PNG`, `GIF`, `WebP`, `SVG`, …; `unknown` for ``unknown``.
    public var description: String { traits.displayName }
}
