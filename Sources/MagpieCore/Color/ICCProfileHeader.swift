#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parts of an ICC profile Magpie reads itself: the colour space of its data and its description tag.
///
/// Nil for bytes too short to be a profile or without the `acsp` signature; lcms2 does the real parsing when a
/// conversion is asked for.
struct ICCProfileHeader {
    let colorModel: ColorProfile.ColorModel
    let description: String?

    init?(_ data: Data) {
        let bytes = [UInt8](data.prefix(min(data.count, 1 << 20)))
        guard bytes.count >= 132, Self.ascii(bytes, 36, 4) == "acsp" else { return nil }
        switch Self.ascii(bytes, 16, 4) {
        case "GRAY": colorModel = .gray
        case "CMYK": colorModel = .cmyk
        default: colorModel = .rgb
        }
        description = Self.descriptionTag(bytes)
    }

    private static func ascii(_ b: [UInt8], _ offset: Int, _ count: Int) -> String? {
        guard offset >= 0, offset + count <= b.count else { return nil }
        return String(decoding: b[offset..<offset + count], as: UTF8.self)
    }

    private static func u32(_ b: [UInt8], _ o: Int) -> Int? {
        guard o >= 0, o + 4 <= b.count else { return nil }
        return Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3])
    }

    /// The `desc` tag: ICC v2 `desc` (ASCII) or v4 `mluc` (the first record, UTF-16BE).
    private static func descriptionTag(_ b: [UInt8]) -> String? {
        guard let count = u32(b, 128), count < 1000 else { return nil }
        for i in 0..<count {
            let entry = 132 + i * 12
            guard ascii(b, entry, 4) == "desc", let offset = u32(b, entry + 4), let size = u32(b, entry + 8),
                offset + size <= b.count, size >= 12
            else { continue }
            switch ascii(b, offset, 4) {
            case "desc":
                guard let length = u32(b, offset + 8), length > 0, offset + 12 + length <= b.count else { return nil }
                let text = b[(offset + 12)..<(offset + 12 + length)].prefix { $0 != 0 }
                return clean(String(decoding: text, as: UTF8.self))
            case "mluc":
                guard let records = u32(b, offset + 8), records > 0, let length = u32(b, offset + 20),
                    let start = u32(b, offset + 24), offset + start + length <= b.count
                else { return nil }
                var units: [UInt16] = []
                var p = offset + start
                while p + 1 < offset + start + length {
                    units.append(UInt16(b[p]) << 8 | UInt16(b[p + 1]))
                    p += 2
                }
                return clean(String(decoding: units, as: UTF16.self))
            default:
                return nil
            }
        }
        return nil
    }

    private static func clean(_ text: String) -> String? {
        // FoundationEssentials has no trimmingCharacters.
        let kept = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0 != "\u{FFFD}" }))
        let trimmed = kept.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
        return trimmed.isEmpty ? nil : String(trimmed)
    }
}
