import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// ICOCoder: icons are assembled here from BMP entries (DIB header, doubled height, AND mask) and PNG entries.
@Suite("ICO coder")
struct ICOCoderTests {
    let coder = ICOCoder()
    typealias F = BMPFixture

    /// A 32-bit entry of `size`x`size` pixels, every pixel `bgra`, with an all-zero AND mask.
    static func entry32(size: Int, bgra: [UInt8]) -> [UInt8] {
        let maskStride = (size + 31) / 32 * 4
        return F.infoHeader(width: size, height: size * 2, bitCount: 32)
            + Array([[UInt8]](repeating: bgra, count: size * size).joined())
            + [UInt8](repeating: 0, count: maskStride * size)
    }

    /// An ICO (type 1) or CUR (type 2) file holding `entries` in that order; the directory's size bytes say 0.
    static func icon(_ entries: [[UInt8]], type: Int = 1, directoryBits: Int = 0) -> Data {
        var directory: [UInt8] = [], payload: [UInt8] = []
        var offset = 6 + 16 * entries.count
        for entry in entries {
            directory += [0, 0, 0, 0] + F.le16(1) + F.le16(directoryBits) + F.le32(entry.count) + F.le32(offset)
            payload += entry
            offset += entry.count
        }
        return Data([0, 0] + F.le16(type) + F.le16(entries.count) + directory + payload)
    }


    @Test("the largest entry is decoded: most pixels, then most bits, then the first; every entry is listed")
    func largestEntry() throws {
        let small32 = Self.entry32(size: 2, bgra: [0, 0, 255, 255])
        let big8 = F.infoHeader(width: 4, height: 8, bitCount: 8, colorsUsed: 1) + [0, 255, 0, 0]
            + [UInt8](repeating: 0, count: 16) + [UInt8](repeating: 0, count: 16)
        let big32 = Self.entry32(size: 4, bgra: [255, 0, 0, 128])
        let big32Second = Self.entry32(size: 4, bgra: [9, 9, 9, 255])
        let data = Self.icon([small32, big8, big32, big32Second])
        let image = try coder.decode(data, options: .default)
        #expect(image.format == .ico && image.width == 4 && image.height == 4)
        #expect(image.pixels[0, 0] == RGBAColor(red: 0, green: 0, blue: 255, alpha: 128))
        let entries = image.sourceInfo?.entries ?? []
        #expect(entries.map(\.width) == [2, 4, 4, 4] && entries.map(\.height) == [2, 4, 4, 4])
        #expect(entries.map(\.bitDepth) == [32, 8, 32, 32])
        #expect(entries.allSatisfy { $0.encoding == "bmp" })
        #expect(try ImageCoderRegistry.shared.header(of: data) == ImageHeader(format: .ico, width: 4, height: 4, frameCount: 1))
    }

    @Test("entries below 32 bits take alpha from the AND mask (a set bit is transparent)")
    func andMaskAlpha() throws {
        // 2x2 8-bit, palette [red, green]; colour rows bottom-up: bottom [0,1], top [1,0]; mask bottom-up: bottom
        // row 10......, top row 01......
        let dib = F.infoHeader(width: 2, height: 4, bitCount: 8, colorsUsed: 2)
        let palette: [UInt8] = [0, 0, 255, 0, 0, 255, 0, 0]
        let rows: [UInt8] = [0, 1, 0, 0, 1, 0, 0, 0]
        let mask: [UInt8] = [0x80, 0, 0, 0, 0x40, 0, 0, 0]
        let image = try coder.decode(Self.icon([dib + palette + rows + mask]), options: .default)
        let green = RGBAColor(red: 0, green: 255, blue: 0)
        #expect(image.pixels[0, 0] == green)
        #expect(image.pixels[1, 0].alpha == 0)
        #expect(image.pixels[0, 1].alpha == 0)
        #expect(image.pixels[1, 1] == green)
        #expect(image.sourceInfo?.entries.first?.bitDepth == 8)
    }

    @Test("a PNG entry is decoded by the PNG coder and listed as png")
    func pngEntry() throws {
        var rgba: [UInt8] = []
        for index in 0..<(5 * 3) { rgba += [UInt8(index * 10), 7, 200, UInt8(255 - index)] }
        let source = try Image(width: 5, height: 3, rgba: rgba)
        let png = try ImageCoderRegistry.shared.encode(source, as: .png)
        let data = Self.icon([Self.entry32(size: 2, bgra: [1, 2, 3, 255]), Array(png)])
        let image = try coder.decode(data, options: .default)
        #expect(image.format == .ico && image.pixels.rgbaBytes == rgba)
        #expect(image.sourceInfo?.entries.map(\.encoding) == ["bmp", "png"])
        #expect(image.sourceInfo?.entries.last?.width == 5)
    }

    @Test("a CUR file (type 2, hotspot in the directory's bit field) decodes as ICO through the registry")
    func cursor() throws {
        let data = Self.icon([Self.entry32(size: 3, bgra: [0, 0, 0, 255])], type: 2, directoryBits: 7)
        #expect(ImageFormat(sniffing: data) == .ico)
        let image = try ImageCoderRegistry.shared.decode(data)
        #expect(image.format == .ico && image.width == 3 && image.sourceInfo?.entries.first?.bitDepth == 32)
    }

    @Test("broken directories are typed errors: no entries, entry past the end, cut mask, bomb entry")
    func brokenFiles() throws {
        let empty = Data([0, 0, 1, 0, 0, 0])
        guard case .corruptData(.ico, _) = TestImages.decodingReason({ try coder.decode(empty, options: .default) }) else {
            Issue.record("no entries should be corruptData")
            return
        }
        var pastEnd = Self.icon([Self.entry32(size: 2, bgra: [0, 0, 0, 255])])
        pastEnd.replaceSubrange(18..<22, with: F.le32(1_000_000))
        guard case .truncatedData(.ico, _) = TestImages.decodingReason({ try coder.decode(pastEnd, options: .default) }) else {
            Issue.record("an entry past the end should be truncatedData")
            return
        }
        let dib8 = F.infoHeader(width: 2, height: 4, bitCount: 8, colorsUsed: 1) + [0, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
        guard case .truncatedData(.ico, _) = TestImages.decodingReason({ try coder.decode(Self.icon([dib8]), options: .default) }) else {
            Issue.record("a missing AND mask should be truncatedData")
            return
        }
        let bomb = Self.icon([F.infoHeader(width: 65535, height: 65535, bitCount: 1)])
        guard case .tooLarge(.ico, _) = TestImages.decodingReason({ try coder.decode(bomb, options: .default) }) else {
            Issue.record("a 65535x32767 entry should be tooLarge")
            return
        }
    }
}
