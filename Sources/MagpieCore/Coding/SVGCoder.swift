import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// SVG renderer (librsvg 2.54 with cairo), for plain and gzip-compressed (`.svgz`) documents.
///
/// - Renders at the **intrinsic size**: `width`/`height` in CSS pixels at 96 dpi, else the `viewBox` size, else the
///   drawing's extent; on a transparent background, straight-alpha RGBA.
/// - With ``ImageDecodingOptions/targetSize`` the document is vector-rendered directly at the size that fits (or, for
///   ``ImageDecodingOptions/ContentMode/aspectFill``, covers) the target, aspect ratio kept, larger or smaller than
///   the intrinsic size: never an upscaled bitmap.
/// - Nothing external is loaded: the document is parsed from bytes with no base URI, so `file:`, `http:` and
///   relative references (images, `xi:include`, stylesheets) render as absent; only `data:` URLs work.
/// - libxml2's limits stay on: entity-expansion bombs, documents with too many elements and malformed XML are
///   `corruptData`, refused fast. The render size is checked against ``ImageDecodingOptions/limits`` (and cairo's
///   32767-pixel side) before the surface is allocated (`tooLarge`).
/// - Separate documents render concurrently; each decode has its own librsvg handle.
public struct SVGCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/svg``.
    public var format: ImageFormat { .svg }
    /// SVG: `image/svg+xml`, `svg` (also `svgz`), alpha, decode only.
    public var traits: FormatTraits {
        FormatTraits(displayName: "SVG", mimeType: "image/svg+xml", fileExtensions: ["svg", "svgz"], supportsAlpha: true)
    }
    /// A document whose first element is `<svg` (after an XML declaration, comments or a doctype), read from the first
    /// 1024 bytes; for gzip data, from the first 1024 inflated bytes (gzip inside gzip is not SVG).
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        if leadingBytes.hasBytes([0x1F, 0x8B]) {
            var prefix = [UInt8](repeating: 0, count: 1024)
            let count = prefix.withUnsafeMutableBufferPointer {
                mg_svg_gunzip_prefix(leadingBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), leadingBytes.count, $0.baseAddress, $0.count)
            }
            return prefix.prefix(count).withUnsafeBytes(Self.looksLikeSVG)
        }
        return Self.looksLikeSVG(UnsafeRawBufferPointer(rebasing: leadingBytes.prefix(1024)))
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

    /// Renders an SVG document; see the type's documentation for the rules.
    ///
    /// - Parameters:
    ///   - data: The document (UTF-8 XML, or gzip-compressed).
    ///   - options: Target size and content mode (vector-scaled), scale and limits.
    /// - Returns: The rendered image with format ``ImageFormat/svg``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `emptyData`, `corruptData` (librsvg's or libxml2's
    ///   message), `tooLarge` or `outOfMemory`.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        var svgOptions = mg_svg_options(target_width: 0, target_height: 0, fill: options.contentMode == .aspectFill ? 1 : 0)
        if let target = options.targetSize, target.width > 0, target.height > 0 {
            svgOptions.target_width = UInt32(clamping: target.width)
            svgOptions.target_height = UInt32(clamping: target.height)
        }
        var limits = CodecBridge.limits(options)
        var info = mg_svg_info()
        var bitmap = mg_bitmap()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: data) { mg_svg_decode($0, $1, &svgOptions, &limits, &info, &bitmap, &error) }
        guard status == Int32(MG_OK.rawValue) else { throw CodecBridge.decodingError(error, format: .svg) }
        var image = Image(pixels: CodecBridge.pixels(adopting: bitmap), scale: options.scale, format: .svg)
        image.sourceInfo = ImageSourceInfo(bitDepth: 8, hasAlpha: true)
        return image
    }

    /// The intrinsic size in whole pixels (what ``decode(_:options:)`` renders without a target size), from parsing
    /// the document without rendering or checking limits.
    ///
    /// - Parameter data: The whole document.
    /// - Returns: Format ``ImageFormat/svg``, the size and 1 frame.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `corruptData` (including a size beyond cairo's
    ///   32767-pixel side as `tooLarge`).
    public func header(of data: Data) throws -> ImageHeader {
        var info = mg_svg_info()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: data) { mg_svg_decode($0, $1, nil, nil, &info, nil, &error) }
        if status == Int32(MG_ERR_TOO_LARGE.rawValue), info.intrinsic_width > 0, info.intrinsic_height > 0 {
            // Bigger than cairo can render is still a size worth describing.
            return ImageHeader(format: .svg, width: Self.whole(info.intrinsic_width), height: Self.whole(info.intrinsic_height), frameCount: 1)
        }
        guard status == Int32(MG_OK.rawValue) else { throw CodecBridge.decodingError(error, format: .svg) }
        return ImageHeader(format: .svg, width: Int(info.width), height: Int(info.height), frameCount: 1)
    }

    private static func whole(_ value: Double) -> Int { Int(min((value - 1e-6).rounded(.up), Double(Int32.max))) }
}
