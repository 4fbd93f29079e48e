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
        /// Cuts the strip's bytes short of what the tags declare (a truncated file).
        var declaredStripBytes: Int?
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
        }
        return Data(file)
    }

    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
}
