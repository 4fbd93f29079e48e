import Foundation

/// Builds small uncompressed little-endian TIFF files for the TIFF coder's tests: one strip a page, the tags a
/// test asks for, any number of pages in the main IFD chain.
struct TIFFTestFile {
    /// One page: its pixels as stored (samples interleaved) and the tags that describe them.
    struct Page {
        var width: Int
        var height: Int
        var bitsPerSample = 8
        var samplesPerPixel: Int
        /// 0 MinIsWhite, 1 MinIsBlack, 2 RGB, 3 palette, 5 separated (CMYK).
        var photometric: Int
        /// The strip's bytes; 16-bit samples little-endian.
        var data: [UInt8]
        var extraSamples: [Int] = []
        var orientation: Int?
        /// Palette pages: red, then green, then blue entries (2^bitsPerSample each).
        var colormap: [UInt16]?
        var icc: [UInt8]?
        var xmp: [UInt8]?
        /// Entries of an EXIF IFD and a GPS IFD hung off this page's IFD (only on the last page: they are written
        /// after it).
        var exif: [Entry]?
        var gps: [Entry]?
        /// Cuts the strip's bytes short of what the tags declare (a truncated file).
        var declaredStripBytes: Int?
    }

    /// One IFD entry: tag, TIFF field type and the value's bytes (little-endian), count = bytes / type size.
    struct Entry {
        var tag: Int
        var type: Int
        var count: Int
        var value: [UInt8]
    }

    /// An 8-bit RGB page of `width` x `height` whose pixel (x, y) is (x*40, y*60, x+y*10).
    static func rgbPage(width: Int = 3, height: Int = 2) -> Page {
        var data: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width { data += [UInt8(x * 40 & 0xFF), UInt8(y * 60 & 0xFF), UInt8((x + y * 10) & 0xFF)] }
        }
        return Page(width: width, height: height, samplesPerPixel: 3, photometric: 2, data: data)
    }

    /// The file holding `pages` in this order.
    static func make(_ pages: [Page]) -> Data {
        var file: [UInt8] = Array("II".utf8) + [42, 0] + le32(8)
        for (index, page) in pages.enumerated() {
            let ifdStart = file.count
            var entries: [(tag: Int, type: Int, count: Int, value: [UInt8])] = []
            func short(_ tag: Int, _ values: [Int]) { entries.append((tag, 3, values.count, values.flatMap(le16))) }
            func long(_ tag: Int, _ value: Int) { entries.append((tag, 4, 1, le32(value))) }
            func bytes(_ tag: Int, _ type: Int, _ value: [UInt8]) { entries.append((tag, type, value.count, value)) }
            long(256, page.width)
            long(257, page.height)
            short(258, Array(repeating: page.bitsPerSample, count: page.samplesPerPixel))
            short(259, [1])
            short(262, [page.photometric])
            long(273, 0)  // strip offset, patched below
            if let orientation = page.orientation { short(274, [orientation]) }
            short(277, [page.samplesPerPixel])
            long(278, page.height)
            long(279, page.declaredStripBytes ?? page.data.count)
            short(284, [1])
            if let colormap = page.colormap { short(320, colormap.map(Int.init)) }
            if !page.extraSamples.isEmpty { short(338, page.extraSamples) }
            if let xmp = page.xmp { bytes(700, 1, xmp) }
            if let icc = page.icc { bytes(34675, 7, icc) }
            if page.exif != nil { long(34665, 0) }  // patched below
            if page.gps != nil { long(34853, 0) }
            let ifdSize = 2 + entries.count * 12 + 4
            var overflow: [UInt8] = []
            var ifd: [UInt8] = le16(entries.count)
            let overflowStart = ifdStart + ifdSize
            let dataStart = overflowStart + entries.reduce(0) { $0 + ($1.value.count > 4 ? ($1.value.count + 1) & ~1 : 0) }
            for entry in entries {
                var value = entry.value
                if entry.tag == 273 { value = le32(dataStart) }
                ifd += le16(entry.tag) + le16(entry.type) + le32(entry.count)
                if value.count > 4 {
                    ifd += le32(overflowStart + overflow.count)
                    overflow += value
                    if value.count % 2 == 1 { overflow.append(0) }
                } else {
                    ifd += value + [UInt8](repeating: 0, count: 4 - value.count)
                }
            }
            let nextIFD = dataStart + page.data.count + (page.data.count % 2)
            ifd += le32(index == pages.count - 1 ? 0 : nextIFD)
            file += ifd + overflow + page.data
            if page.data.count % 2 == 1 { file.append(0) }
            for (pointer, sub) in [(34665, page.exif), (34853, page.gps)] {
                guard let sub, let at = entries.firstIndex(where: { $0.tag == pointer }) else { continue }
                let field = ifdStart + 2 + at * 12 + 8
                file.replaceSubrange(field..<field + 4, with: le32(file.count))
                file += subIFD(sub, at: file.count)
            }
        }
        return Data(file)
    }

    /// An IFD of `entries` placed at `start`, its out-of-line values right after it.
    static func subIFD(_ entries: [Entry], at start: Int) -> [UInt8] {
        var ifd = le16(entries.count)
        var overflow: [UInt8] = []
        let overflowStart = start + 2 + entries.count * 12 + 4
        for entry in entries {
            ifd += le16(entry.tag) + le16(entry.type) + le32(entry.count)
            if entry.value.count > 4 {
                ifd += le32(overflowStart + overflow.count)
                overflow += entry.value
                if entry.value.count % 2 == 1 { overflow.append(0) }
            } else {
                ifd += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
            }
        }
        return ifd + le32(0) + overflow
    }

    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
}
