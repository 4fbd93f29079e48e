#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ICO and CUR decoder (both are ``ImageFormat/ico``): a strict directory parser written here.
///
/// - Decodes the **largest entry**: most pixels, then most bits per pixel, then the first in the directory. Sizes and
///   depths come from each entry's own header (PNG `IHDR` or the bitmap header), not from the directory, whose
///   one-byte sizes cannot say 256 or more and are often wrong.
/// - Bitmap entries are a DIB without file header whose height counts the colour rows and the 1-bit AND mask below
///   them; entries below 32 bits take their alpha from the mask (a set bit is transparent), 32-bit entries use their
///   fourth byte as alpha. PNG entries are decoded by ``PNGCoder``.
/// - ``ImageSourceInfo/entries`` lists every entry (size, bits per pixel, `png` or `bmp`), as `magpie info` prints them.
/// - Errors: no entries or a directory past the end, an entry pointing past the end, a malformed entry header
///   (`truncatedData`/`corruptData`); a chosen entry above the limits is `tooLarge` before anything is allocated.
public struct ICOCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Always ``ImageFormat/ico``.
    public var format: ImageFormat { .ico }
    /// ICO: `image/vnd.microsoft.icon`, `ico` (also `cur`), alpha, decode only.
    public var traits: FormatTraits {
        FormatTraits(displayName: "ICO", mimeType: "image/vnd.microsoft.icon", fileExtensions: ["ico", "cur"], supportsAlpha: true)
    }
    /// An icon (type 1) or cursor (type 2) directory with at least one image; not an ISO file whose `ftyp` box is
    /// 256 bytes long, which starts with the same four bytes.
    public func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool {
        let b = leadingBytes
        return (b.hasBytes([0, 0, 1, 0]) || b.hasBytes([0, 0, 2, 0])) && b.count >= 6 && b[4] | b[5] != 0
            && !b.hasASCII("ftyp", at: 4)
    }

    /// One directory entry as its own header describes it.
    struct Entry {
        var offset: Int
        var length: Int
        var isPNG: Bool
        var width: Int
        var height: Int
        var bitDepth: Int

        var info: ImageSourceInfo.Entry {
            ImageSourceInfo.Entry(width: width, height: height, bitDepth: bitDepth, encoding: isPNG ? "png" : "bmp")
        }
    }

    /// Decodes the largest entry of an ICO or CUR file; see the type's documentation for the rules.
    ///
    /// - Parameters:
    ///   - data: A complete ICO or CUR file.
    ///   - options: Limits and scale; PNG entries get the same options.
    /// - Returns: The image with format ``ImageFormat/ico`` and every entry in ``Image/sourceInfo``.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `emptyData`, `truncatedData`, `corruptData`,
    ///   `tooLarge`, `unsupportedFormat` or `outOfMemory`.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        let entries = try Self.entries(data)
        let chosen = Self.largest(entries)
        let pixelCount = chosen.width.multipliedReportingOverflow(by: chosen.height)
        guard !pixelCount.overflow, pixelCount.partialValue <= options.limits.maxPixelsPerFrame,
              pixelCount.partialValue <= options.limits.maxTotalBytes / 4
        else {
            let message = "the largest entry declares \(chosen.width)x\(chosen.height) pixels"
            throw MagpieError.decodingFailed(reason: .tooLarge(.ico, message: message))
        }
        var image: Image
        if chosen.isPNG {
            let start = data.startIndex + chosen.offset
            image = try PNGCoder().decode(Data(data[start..<start + chosen.length]), options: options)
        } else {
            image = try data.withUnsafeBytes { raw in
                let bytes = LittleEndianBytes(bytes: raw)
                let header = try DIBHeader.parse(bytes, at: chosen.offset, pixelOffset: nil, format: .ico, limits: options.limits)
                do {
                    let pixels = try DIBPixels.decode(bytes, header: header, andMask: true, format: .ico)
                    return Image(pixels: pixels, scale: options.scale, format: .ico)
                } catch MagpieError.imageCreationFailed(reason: .outOfMemory(let count)) {
                    throw MagpieError.decodingFailed(reason: .outOfMemory(.ico, message: "cannot allocate \(count) bytes"))
                }
            }
        }
        image.format = .ico
        image.sourceInfo = ImageSourceInfo(
            bitDepth: chosen.isPNG ? (image.sourceInfo?.bitDepth ?? 8) : min(chosen.bitDepth, 8),
            hasAlpha: true, entries: entries.map(\.info))
        return image
    }

    /// The size of the entry ``decode(_:options:)`` would decode, without decoding pixels or checking limits.
    ///
    /// - Parameter data: The file (the largest entry's header must be inside it).
    /// - Returns: Format ``ImageFormat/ico``, the largest entry's size and 1 frame.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `truncatedData` or `corruptData`.
    public func header(of data: Data) throws -> ImageHeader {
        let chosen = Self.largest(try Self.entries(data))
        return ImageHeader(format: .ico, width: chosen.width, height: chosen.height, frameCount: 1)
    }

    /// The first entry with the most pixels, then the most bits per pixel.
    static func largest(_ entries: [Entry]) -> Entry {
        var best = entries[0]
        for entry in entries.dropFirst() {
            let (a, b) = (entry.width.multipliedReportingOverflow(by: entry.height), best.width.multipliedReportingOverflow(by: best.height))
            let area = a.overflow ? Int.max : a.partialValue, bestArea = b.overflow ? Int.max : b.partialValue
            if area > bestArea || (area == bestArea && entry.bitDepth > best.bitDepth) { best = entry }
        }
        return best
    }

    /// Every directory entry, sized from its own header.
    static func entries(_ data: Data) throws -> [Entry] {
        func corrupt(_ message: String) -> MagpieError { .decodingFailed(reason: .corruptData(.ico, message: message)) }
        func truncated(_ message: String) -> MagpieError { .decodingFailed(reason: .truncatedData(.ico, message: message)) }
        return try data.withUnsafeBytes { raw in
            let bytes = LittleEndianBytes(bytes: raw)
            guard let reserved = bytes.u16(0), let type = bytes.u16(2), let count = bytes.u16(4) else {
                throw truncated("the file ends inside the icon header")
            }
            guard reserved == 0, type == 1 || type == 2 else { throw corrupt("not an ICO or CUR header") }
            guard count > 0 else { throw corrupt("no directory entries") }
            guard 6 + 16 * count <= bytes.count else { throw truncated("the directory of \(count) entries runs past the end") }
            return try (0..<count).map { index in
                let at = 6 + 16 * index
                let declared = Int(bytes.u32(at + 8)!), offset = Int(bytes.u32(at + 12)!)
                guard offset >= 6 + 16 * count, offset + 8 <= bytes.count else {
                    throw truncated("entry \(index) points past the end (offset \(offset))")
                }
                // The declared length is often wrong in real files; the data runs at most to the end of the file.
                let length = declared >= 8 && offset + declared <= bytes.count ? declared : bytes.count - offset
                if raw[offset..<offset + 8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
                    guard let width = bytes.u32(offset + 16).map(\.byteSwapped), let height = bytes.u32(offset + 20).map(\.byteSwapped),
                          let depth = bytes.u8(offset + 24), let colourType = bytes.u8(offset + 25)
                    else { throw truncated("entry \(index): the PNG header is cut short") }
                    let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colourType] ?? 1
                    return Entry(offset: offset, length: length, isPNG: true, width: Int(width), height: Int(height),
                                 bitDepth: depth * channels)
                }
                guard let headerSize = bytes.u32(offset) else { throw truncated("entry \(index): the bitmap header is cut short") }
                let core = headerSize == 12
                guard let width = core ? bytes.u16(offset + 4) : bytes.i32(offset + 4),
                      let height = core ? bytes.u16(offset + 6) : bytes.i32(offset + 8),
                      let bits = core ? bytes.u16(offset + 10) : bytes.u16(offset + 14)
                else { throw truncated("entry \(index): the bitmap header is cut short") }
                return Entry(offset: offset, length: length, isPNG: false, width: width, height: abs(height) / 2, bitDepth: bits)
            }
        }
    }
}
