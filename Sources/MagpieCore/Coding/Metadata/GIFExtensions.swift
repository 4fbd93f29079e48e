#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The application extensions of a GIF that carry an ICC profile (`ICCRGBG1012`) or XMP (`XMP DataXMP`), and whether
/// any frame has a transparent index; read by walking the block structure (no LZW decoding).
enum GIFExtensions {
    static func read(_ data: Data) -> (EmbeddedMetadata, ImageSourceInfo) {
        let b = [UInt8](data)
        var icc: Data?, xmp: Data?
        var transparent = false
        var xmpTried = false
        guard b.count >= 13 else { return (EmbeddedMetadata(), ImageSourceInfo(bitDepth: 8, hasAlpha: false)) }
        var offset = 13
        if b[10] & 0x80 != 0 { offset += 3 << ((Int(b[10]) & 7) + 1) }

        /// Sub-blocks from `start`: their joined bytes and where the terminator ends; nil past the end.
        func subBlocks(_ start: Int) -> ([UInt8], Int)? {
            var bytes: [UInt8] = []
            var p = start
            while p < b.count {
                let n = Int(b[p])
                if n == 0 { return (bytes, p + 1) }
                guard p + 1 + n <= b.count else { return nil }
                bytes.append(contentsOf: b[(p + 1)..<(p + 1 + n)])
                p += 1 + n
            }
            return nil
        }

        loop: while offset < b.count {
            switch b[offset] {
            case 0x21 where offset + 2 < b.count:
                let label = b[offset + 1]
                if label == 0xFF, offset + 14 <= b.count, b[offset + 2] == 11 {
                    let name = String(decoding: b[(offset + 3)..<(offset + 14)], as: UTF8.self)
                    if name == "XMP DataXMP", !xmpTried {
                        // XMP's sub-block lengths are part of the packet (a "magic trailer" ends it): keep raw bytes
                        // up to the end of the closing processing instruction. Only the first such block is read,
                        // and the search is bounded, so a file of many XMP blocks costs linear time.
                        xmpTried = true
                        let start = offset + 14
                        let window = start..<min(b.count, start + (4 << 20))
                        if let end = find(Array("<?xpacket end=".utf8), in: b, within: window),
                            let close = find(Array("?>".utf8), in: b, within: end..<window.upperBound)
                        {
                            xmp = Data(b[start..<(close + 2)])
                        }
                    }
                    guard let (bytes, next) = subBlocks(offset + 14) else { break loop }
                    if name == "ICCRGBG1012", icc == nil { icc = Data(bytes) }
                    offset = next
                } else {
                    if label == 0xF9, offset + 4 < b.count, b[offset + 3] & 1 != 0 { transparent = true }
                    guard let (_, next) = subBlocks(offset + 2) else { break loop }
                    offset = next
                }
            case 0x2C where offset + 10 <= b.count:
                var p = offset + 10
                if b[offset + 9] & 0x80 != 0 { p += 3 << ((Int(b[offset + 9]) & 7) + 1) }
                guard let (_, next) = subBlocks(p + 1) else { break loop }
                offset = next
            default:
                break loop
            }
        }
        return (
            EmbeddedMetadata(colorProfile: icc.map { ColorProfile(iccData: $0) }, metadata: ImageMetadata(xmp: xmp)),
            ImageSourceInfo(bitDepth: 8, hasAlpha: transparent)
        )
    }

    /// The first index in `range` where `needle` starts in `haystack`, nil when it does not fit or is absent.
    private static func find(_ needle: [UInt8], in haystack: [UInt8], within range: Range<Int>) -> Int? {
        guard range.count >= needle.count else { return nil }
        for i in range.lowerBound...(range.upperBound - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }
}
