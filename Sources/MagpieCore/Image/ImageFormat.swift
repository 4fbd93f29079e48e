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
public enum ImageFormat: String, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// JPEG, PNG (including APNG), GIF or WebP.
    case jpeg, png, gif, webp
    /// HEIF/HEIC, AVIF, JPEG XL, BMP, TIFF, ICO/CUR or SVG. Which formats decode or encode is the registry's to
    /// say (``ImageCoderRegistry/decodableFormats``), not this type's.
    case heic, avif, jxl, bmp, tiff, ico, svg
    /// Not an image format Magpie recognises (also the format of images built in memory).
    case unknown

    /// Identifies the format from the first bytes of `data` (at most 1024 are looked at; for gzip data, the first
    /// 1024 inflated bytes: a gzip-compressed SVG is ``svg``).
    ///
    /// - Parameter data: The file's bytes, or at least its start.
    ///   Empty or unrecognised data gives ``unknown``.
    public init(sniffing data: Data) {
        let format = data.withUnsafeBytes { Self.sniff(UnsafeRawBufferPointer(rebasing: $0.prefix(1024))) }
        // gzip: a compressed SVG document (`.svgz`) is SVG, which its coder renders; nothing else compressed is an
        // image. The inflated start is sniffed once, not recursively (gzip inside gzip stays unknown).
        if format == .unknown, data.starts(with: [0x1F, 0x8B]) {
            let inflated = SVGCoder.gunzippedPrefix(data)
            self = inflated.withUnsafeBytes { Self.sniff($0) } == .svg ? .svg : .unknown
            return
        }
        self = format
    }

    /// True for the formats the built-in coders decode (``ImageCoderRegistry/builtInCoders``).
    @available(*, deprecated, message: "ask the registry: ImageCoderRegistry.shared.canDecode(format)")
    public var isBuiltInDecodable: Bool {
        ImageCoderRegistry.builtInCoders.contains { $0.format == self }
    }

    /// The usual MIME type, for example `image/jpeg`; `application/octet-stream` for ``unknown``.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .heic: "image/heic"
        case .avif: "image/avif"
        case .jxl: "image/jxl"
        case .bmp: "image/bmp"
        case .tiff: "image/tiff"
        case .ico: "image/vnd.microsoft.icon"
        case .svg: "image/svg+xml"
        case .unknown: "application/octet-stream"
        }
    }

    /// The usual file extension, without the dot: `jpg` for JPEG, `bin` for ``unknown``, otherwise the raw value.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .unknown: "bin"
        default: rawValue
        }
    }

    /// The format a file extension names (for choosing an output format, never for reading).
    ///
    /// - Parameter fileExtension: The extension without the dot, in any case (`JPG`, `jpeg`, `apng`, `tif`).
    ///   Nil when it names no format listed here.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg", "jpe", "jfif": self = .jpeg
        case "png", "apng": self = .png
        case "gif": self = .gif
        case "webp": self = .webp
        case "heic", "heif": self = .heic
        case "avif", "avifs": self = .avif
        case "jxl": self = .jxl
        case "bmp": self = .bmp
        case "tif", "tiff": self = .tiff
        case "ico", "cur": self = .ico
        case "svg", "svgz": self = .svg
        default: return nil
        }
    }

    /// The name for messages: `JPEG`, `PNG`, `GIF`, `WebP`, `SVG`, …; `unknown` for ``unknown``.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .svg: "SVG"
        case .jxl: "JPEG XL"
        case .webp: "WebP"
        default: rawValue.uppercased()
        }
    }

    private static func sniff(_ b: UnsafeRawBufferPointer) -> ImageFormat {
        func starts(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
            guard b.count >= offset + bytes.count else { return false }
            for (i, byte) in bytes.enumerated() where b[offset + i] != byte { return false }
            return true
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("ftyp".utf8), at: 4) { return sniffISOBMFF(b) }
        if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts([0x49, 0x49, 0x2B, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2B]) { return .tiff }  // BigTIFF
        if starts(Array("BM".utf8)), b.count >= 18 {
            // BITMAPFILEHEADER is followed by a DIB header whose size is one of a few values.
            let dib = UInt32(b[14]) | UInt32(b[15]) << 8 | UInt32(b[16]) << 16 | UInt32(b[17]) << 24
            if [12, 16, 40, 52, 56, 64, 108, 124].contains(dib) { return .bmp }
        }
        if (starts([0, 0, 1, 0]) || starts([0, 0, 2, 0])), b.count >= 6, b[4] | b[5] != 0 { return .ico }
        if looksLikeSVG(b) { return .svg }
        return .unknown
    }

    /// HEIF-family files (HEIC and AVIF) start with an `ftyp` box naming brands.
    private static func sniffISOBMFF(_ b: UnsafeRawBufferPointer) -> ImageFormat {
        let boxSize = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        let end = min(b.count, max(boxSize, 16))
        var brands: [String] = []
        var offset = 8
        while offset + 4 <= end {
            if offset != 12 {  // bytes 12..<16 hold the minor version, not a brand
                brands.append(String(decoding: b[offset..<offset + 4], as: UTF8.self))
            }
            offset += 4
        }
        if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return .avif }
        let heif: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]
        if brands.contains(where: heif.contains) { return .heic }
        return .unknown
    }

    private static func looksLikeSVG(_ b: UnsafeRawBufferPointer) -> Bool {
        var text = String(decoding: b, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let trimmed = text.drop(while: { $0.isWhitespace })
        guard trimmed.hasPrefix("<") else { return false }
        let lower = trimmed.lowercased()
        if lower.hasPrefix("<svg") { return true }
        return (lower.hasPrefix("<?xml") || lower.hasPrefix("<!--") || lower.hasPrefix("<!doctype svg"))
            && lower.contains("<svg")
    }
}
