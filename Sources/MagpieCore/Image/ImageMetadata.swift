#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The metadata a file carried besides its pixels: the EXIF and XMP payloads, kept so an encoder can write them
/// back when asked (``ImageEncodingOptions/metadata``).
public struct ImageMetadata: Sendable, Hashable {
    /// The EXIF payload as a TIFF structure (starting `II*\0` or `MM\0*`), without JPEG's `Exif\0\0` prefix.
    public var exif: Data?
    /// The XMP packet (XML text).
    public var xmp: Data?

    /// Metadata with the given payloads (empty ones are dropped).
    public init(exif: Data? = nil, xmp: Data? = nil) {
        self.exif = exif.flatMap { $0.isEmpty ? nil : EXIFData.strippingJPEGPrefix($0) }
        self.xmp = xmp.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// No EXIF, no XMP.
    public static let none = ImageMetadata()

    /// True when the EXIF holds a GPS IFD (tag 0x8825 in IFD0): a location.
    public var hasGPS: Bool { exif.map(EXIFData.hasGPS) ?? false }
}

/// One kind of metadata a file can carry, as `magpie info` lists them.
public enum MetadataKind: String, Sendable, CaseIterable, Comparable {
    /// An EXIF block.
    case exif
    /// A GPS location inside the EXIF block.
    case gps
    /// An ICC colour profile.
    case icc
    /// An XMP packet.
    case xmp

    /// Alphabetical, as listed.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What a decoder knows about the file besides pixels and colour: stored bit depth, whether it has an alpha
/// channel, and, for containers of several images (ICO, multi-page TIFF), each entry.
public struct ImageSourceInfo: Sendable, Hashable {
    /// Bits per sample as stored (1, 4, 8, 10, 12, 16, …).
    public var bitDepth: Int
    /// Whether the file stores an alpha channel (or a transparency key or mask).
    public var hasAlpha: Bool
    /// The images a container holds, in file order; empty for single-image files.
    public var entries: [Entry]

    /// One image inside a container.
    public struct Entry: Sendable, Hashable {
        /// Width in pixels.
        public var width: Int
        /// Height in pixels.
        public var height: Int
        /// Bits per pixel (ICO) or per sample (TIFF).
        public var bitDepth: Int
        /// The entry's own encoding when it differs from the container's (ICO entries: `png` or `bmp`).
        public var encoding: String?

        /// An entry.
        public init(width: Int, height: Int, bitDepth: Int, encoding: String? = nil) {
            (self.width, self.height, self.bitDepth, self.encoding) = (width, height, bitDepth, encoding)
        }
    }

    /// Source facts as given.
    public init(bitDepth: Int = 8, hasAlpha: Bool, entries: [Entry] = []) {
        self.bitDepth = bitDepth
        self.hasAlpha = hasAlpha
        self.entries = entries
    }
}
