import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// Builds small BMP files byte by byte, so each test states its exact input.
enum BMPFixture {
    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// A BITMAPINFOHEADER-family header of `size` bytes (40, 52, 56, 108 or 124); bytes past 40 come from `tail`.
    static func infoHeader(
        size: Int = 40, width: Int, height: Int, bitCount: Int, compression: Int = 0, colorsUsed: Int = 0,
        planes: Int = 1, tail: [UInt8] = []
    ) -> [UInt8] {
        var header = le32(size) + le32(width) + le32(height) + le16(planes) + le16(bitCount) + le32(compression)
        header += le32(0) + le32(2835) + le32(2835) + le32(colorsUsed) + le32(0)
        header += tail
        header += [UInt8](repeating: 0, count: max(0, size - header.count))
        return Array(header.prefix(max(size, 40)))
    }

    /// A BMP file: file header, `dib` (header plus masks), palette of BGR triples (4 bytes each unless `core`),
    /// then `pixels` at the offset the file header names.
    static func file(dib: [UInt8], palette: [[UInt8]] = [], core: Bool = false, pixels: [UInt8]) -> Data {
        var paletteBytes: [UInt8] = []
        for entry in palette {
            paletteBytes += entry.prefix(3)
            if !core { paletteBytes.append(0) }
        }
        let offset = 14 + dib.count + paletteBytes.count
        let fileHeader: [UInt8] = [0x42, 0x4D] + le32(offset + pixels.count) + [0, 0, 0, 0] + le32(offset)
        return Data(fileHeader + dib + paletteBytes + pixels)
    }

    /// RGBA bytes of `image`'s first frame.
    static func rgba(_ image: Image) -> [UInt8] { image.pixels.rgbaBytes }
}

@Suite("BMP coder")
struct BMPCoderTests {
    let coder = BMPCoder()
    typealias F = BMPFixture


    static func isCorrupt(_ reason: MagpieError.DecodingFailureReason?) -> Bool {
        if case .corruptData(.bmp, _) = reason { return true }
        return false
    }

    @Test("1-bit palette, bottom-up rows: the first stored row is the bottom one")
    func oneBitBottomUp() throws {
        // 3x2; stored bottom row 1,0,1 then top row 0,1,1; each row padded to 4 bytes.
        let data = F.file(
            dib: F.infoHeader(width: 3, height: 2, bitCount: 1, colorsUsed: 2),
            palette: [[0, 0, 255], [255, 0, 0]],  // BGR: red, blue
            pixels: [0b1010_0000, 0, 0, 0, 0b0110_0000, 0, 0, 0])
        let image = try coder.decode(data, options: .default)
        #expect(image.width == 3 && image.height == 2 && image.format == .bmp)
        let red: [UInt8] = [255, 0, 0, 255], blue: [UInt8] = [0, 0, 255, 255]
        #expect(F.rgba(image) == red + blue + blue + blue + red + blue)
    }

    @Test("4-bit and 8-bit palettes; an index past the palette is opaque black")
    func fourAndEightBit() throws {
        let four = F.file(
            dib: F.infoHeader(width: 3, height: 1, bitCount: 4, colorsUsed: 2),
            palette: [[10, 20, 30], [40, 50, 60]],
            pixels: [0x01, 0x50, 0, 0])
        #expect(F.rgba(try coder.decode(four, options: .default)) == [30, 20, 10, 255, 60, 50, 40, 255, 0, 0, 0, 255])
        let eight = F.file(
            dib: F.infoHeader(width: 2, height: 1, bitCount: 8, colorsUsed: 1),
            palette: [[1, 2, 3]],
            pixels: [0, 200, 0, 0])
        #expect(F.rgba(try coder.decode(eight, options: .default)) == [3, 2, 1, 255, 0, 0, 0, 255])
    }

    @Test("colorsUsed 0 means a full 2^bits palette, and a core (12-byte) header has 3-byte palette entries")
    func paletteSizes() throws {
        let full = F.file(
            dib: F.infoHeader(width: 1, height: 1, bitCount: 1),
            palette: [[0, 0, 0], [9, 8, 7]],
            pixels: [0x80, 0, 0, 0])
        #expect(F.rgba(try coder.decode(full, options: .default)) == [7, 8, 9, 255])
        let core = F.le32(12) + F.le16(2) + F.le16(1) + F.le16(1) + F.le16(8)
        let palette = (0..<256).map { [UInt8($0), 0, UInt8(255 - $0)] }
        let data = F.file(dib: core, palette: palette, core: true, pixels: [5, 250, 0, 0])
        #expect(F.rgba(try coder.decode(data, options: .default)) == [250, 0, 5, 255, 5, 0, 250, 255])
    }

    @Test("24-bit top-down rows (negative height) come out in file order")
    func twentyFourBitTopDown() throws {
        let data = F.file(
            dib: F.infoHeader(width: 1, height: -2, bitCount: 24),
            pixels: [1, 2, 3, 0, 4, 5, 6, 0])
        #expect(F.rgba(try coder.decode(data, options: .default)) == [3, 2, 1, 255, 6, 5, 4, 255])
    }

    @Test("the fourth byte of a 32-bit BI_RGB pixel is padding, not alpha")
    func thirtyTwoBitPadding() throws {
        let data = F.file(dib: F.infoHeader(width: 2, height: 1, bitCount: 32), pixels: [1, 2, 3, 0, 4, 5, 6, 77])
        let image = try coder.decode(data, options: .default)
        #expect(F.rgba(image) == [3, 2, 1, 255, 6, 5, 4, 255])
        #expect(image.sourceInfo?.hasAlpha == false)
    }

    @Test("16-bit defaults to 5-5-5; bit fields scale an n-bit channel by round(v*255/(2^n-1))")
    func bitFields() throws {
        // 5-5-5: red 31, green 16, blue 1 -> 255, round(16*255/31)=132, round(255/31)=8.
        let v555 = 31 << 10 | 16 << 5 | 1
        let plain = F.file(dib: F.infoHeader(width: 1, height: 1, bitCount: 16), pixels: F.le16(v555) + [0, 0])
        #expect(F.rgba(try coder.decode(plain, options: .default)) == [255, 132, 8, 255])
        // 5-6-5 masks after a 40-byte header: green 32 of 63 -> 130.
        let masks = F.le32(0xF800) + F.le32(0x07E0) + F.le32(0x001F)
        let v565 = 0 << 11 | 32 << 5 | 31
        let rgb565 = F.file(dib: F.infoHeader(width: 1, height: 1, bitCount: 16, compression: 3) + masks, pixels: F.le16(v565) + [0, 0])
        #expect(F.rgba(try coder.decode(rgb565, options: .default)) == [0, 130, 255, 255])
    }

    @Test("a V5 header's alpha mask gives alpha (4-4-4-4), and its embedded ICC profile is reported")
    func v5AlphaAndProfile() throws {
        let profile = [UInt8](repeating: 0xAB, count: 64)
        var tail = F.le32(0x0F00) + F.le32(0x00F0) + F.le32(0x000F) + F.le32(0xF000)
        tail += Array("DEBM".utf8)  // 'MBED' little-endian
        tail += [UInt8](repeating: 0, count: 108 - 40 - tail.count)
        tail += F.le32(4) + F.le32(124 + 4) + F.le32(profile.count) + F.le32(0)  // intent, profile offset, size, reserved
        let dib = F.infoHeader(size: 124, width: 1, height: 1, bitCount: 16, compression: 3, tail: tail)
        let pixel = 0x8 << 12 | 0xF << 8 | 0x0 << 4 | 0x5  // a=8 r=15 g=0 b=5
        let data = F.file(dib: dib, pixels: F.le16(pixel) + [0, 0] + profile)
        let image = try coder.decode(data, options: .default)
        #expect(F.rgba(image) == [255, 0, 85, 136])
        #expect(image.colorProfile?.iccData == Data(profile))
        #expect(image.sourceInfo?.hasAlpha == true)
    }

    @Test("RLE8: runs, literals, delta (skipped pixels show palette entry 0), end of line, end of bitmap")
    func rle8() throws {
        // 4x3, bottom-up. Row 0 (bottom): run of 2 x index 1, literal [2,3,1] (its third pixel clipped). Row 1: delta
        // (2,0) then run 1 x 3. Row 2: never written (end of bitmap).
        let stream: [UInt8] = [2, 1, 0, 3, 2, 3, 1, 0, 0, 0, 0, 2, 2, 0, 1, 3, 0, 0, 0, 1]
        let data = F.file(
            dib: F.infoHeader(width: 4, height: 3, bitCount: 8, compression: 1, colorsUsed: 4),
            palette: [[0, 0, 0], [0, 0, 10], [0, 0, 20], [0, 0, 30]],
            pixels: stream)
        let r = try coder.decode(data, options: .default).pixels.rgbaBytes.enumerated().filter { $0.offset % 4 == 0 }.map(\.element)
        #expect(r == [0, 0, 0, 0, 0, 0, 30, 0, 10, 10, 20, 30])
    }

    @Test("RLE4: nibbles alternate within a run and a literal")
    func rle4() throws {
        let stream: [UInt8] = [3, 0x12, 0, 3, 0x30, 0, 0, 1]  // run 1,2,1 then literal 3... clipped to width 4
        let data = F.file(
            dib: F.infoHeader(width: 4, height: 1, bitCount: 4, compression: 2, colorsUsed: 4),
            palette: [[0, 0, 0], [0, 0, 10], [0, 0, 20], [0, 0, 30]],
            pixels: stream)
        let r = try coder.decode(data, options: .default).pixels.rgbaBytes.enumerated().filter { $0.offset % 4 == 0 }.map(\.element)
        #expect(r == [10, 20, 10, 30])
    }

    @Test("RLE runs past the row's end are clipped; RLE data below the last row is corrupt")
    func rleBounds() throws {
        let palette: [[UInt8]] = [[0, 0, 0], [0, 0, 10]]
        let clipped = F.file(
            dib: F.infoHeader(width: 2, height: 1, bitCount: 8, compression: 1, colorsUsed: 2),
            palette: palette, pixels: [9, 1, 0, 0, 0, 1])
        #expect(try coder.decode(clipped, options: .default).width == 2)
        let below = F.file(
            dib: F.infoHeader(width: 2, height: 1, bitCount: 8, compression: 1, colorsUsed: 2),
            palette: palette, pixels: [0, 2, 0, 5, 1, 1, 0, 1])
        #expect(Self.isCorrupt(TestImages.decodingReason { try coder.decode(below, options: .default) }))
        let cut = F.file(
            dib: F.infoHeader(width: 2, height: 2, bitCount: 8, compression: 1, colorsUsed: 2),
            palette: palette, pixels: [2, 1, 0, 0])
        guard case .truncatedData(.bmp, _) = TestImages.decodingReason({ try coder.decode(cut, options: .default) }) else {
            Issue.record("RLE data ending before the last row should be truncatedData")
            return
        }
    }

    @Test("a file shorter than the pixel rows it declares is truncatedData")
    func truncated() throws {
        let whole = F.file(dib: F.infoHeader(width: 4, height: 4, bitCount: 24), pixels: [UInt8](repeating: 7, count: 48))
        #expect(try coder.decode(whole, options: .default).width == 4)
        for cut in [whole.count - 1, 54, 30, 16] {
            guard case .truncatedData(.bmp, _) = TestImages.decodingReason({ try coder.decode(whole.prefix(cut), options: .default) }) else {
                Issue.record("\(cut) bytes should be truncatedData")
                continue
            }
        }
    }

    @Test("nonsense headers are corruptData: bit count, planes, palette larger than 2^bits, header size, width")
    func corruptHeaders() throws {
        let cases: [(String, [UInt8])] = [
            ("bit count 7", F.infoHeader(width: 1, height: 1, bitCount: 7)),
            ("planes 0", F.infoHeader(width: 1, height: 1, bitCount: 24, planes: 0)),
            ("300 colours for 8 bits", F.infoHeader(width: 1, height: 1, bitCount: 8, colorsUsed: 300)),
            ("header size 66", F.le32(66) + Array(F.infoHeader(width: 1, height: 1, bitCount: 24).dropFirst(4)) + [UInt8](repeating: 0, count: 26)),
            ("negative width", F.infoHeader(width: -1, height: 1, bitCount: 24)),
            ("RLE8 with 24 bits", F.infoHeader(width: 1, height: 1, bitCount: 24, compression: 1)),
            ("unknown compression", F.infoHeader(width: 1, height: 1, bitCount: 24, compression: 77)),
        ]
        for (name, dib) in cases {
            let data = F.file(dib: dib, pixels: [UInt8](repeating: 0, count: 2048))
            #expect(Self.isCorrupt(TestImages.decodingReason { try coder.decode(data, options: .default) }), "\(name)")
        }
    }

    @Test("a bomb header is refused as tooLarge from the header, before any allocation")
    func bomb() throws {
        let data = F.file(dib: F.infoHeader(width: 50_000, height: 50_000, bitCount: 24), pixels: [0, 0, 0, 0])
        // tooLarge (not truncatedData) shows the header check ran before the rows were even looked for.
        guard case .tooLarge(.bmp, _) = TestImages.decodingReason({ try coder.decode(data, options: .default) }) else {
            Issue.record("expected tooLarge")
            return
        }
        var options = ImageDecodingOptions.default
        options.limits = ImageDecodingLimits(maxPixelsPerFrame: 15)
        let small = F.file(dib: F.infoHeader(width: 4, height: 4, bitCount: 24), pixels: [UInt8](repeating: 0, count: 48))
        guard case .tooLarge = TestImages.decodingReason({ try coder.decode(small, options: options) }) else {
            Issue.record("16 pixels over a 15-pixel limit should be tooLarge")
            return
        }
    }

    @Test("the registry routes BMP to this coder, and header(of:) reads the size of an over-limit file")
    func registryAndHeader() throws {
        let data = F.file(dib: F.infoHeader(width: 3, height: -5, bitCount: 24), pixels: [UInt8](repeating: 0, count: 60))
        #expect(try ImageCoderRegistry.shared.decode(data).format == .bmp)
        let bomb = F.file(dib: F.infoHeader(width: 50_000, height: 50_000, bitCount: 24), pixels: [])
        #expect(try ImageCoderRegistry.shared.header(of: bomb) == ImageHeader(format: .bmp, width: 50_000, height: 50_000, frameCount: 1))
        #expect(try ImageCoderRegistry.shared.header(of: data) == ImageHeader(format: .bmp, width: 3, height: 5, frameCount: 1))
    }
}
