import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// Hand-built GIF files and generated images for the GIF coder tests.
private enum GIFFixtures {
    /// One image block of a hand-built GIF.
    struct Block {
        var left = 0, top = 0, width: Int, height: Int
        /// Palette indices in file order (for interlaced blocks, rows in pass order).
        var indices: [UInt8]
        var localPalette: [UInt8]? = nil
        var interlaced = false
        /// Graphic Control Extension: (disposal, delay in cs, transparent index); nil writes none.
        var control: (disposal: Int, delay: Int, transparent: Int?)? = nil
    }

    /// A GIF89a with the given screen, global palette (RGB triples), extra bytes before the
    /// first block (e.g. loop extensions), and image blocks. LZW data uses 9-bit literal codes
    /// with a clear code every 250 codes, which every decoder reads without building a table.
    static func gif(
        width: Int, height: Int, palette: [UInt8]?, before: [UInt8] = [], blocks: [Block], trailer: Bool = true
    ) -> Data {
        var out = Array("GIF89a".utf8)
        out += le16(width) + le16(height)
        if let palette {
            let size = tableSize(palette.count / 3)
            out += [0x80 | 0x70 | UInt8(size.bits - 1), 0, 0]
            out += palette + [UInt8](repeating: 0, count: 3 * size.entries - palette.count)
        } else {
            out += [0x70, 0, 0]
        }
        out += before
        for block in blocks {
            if let control = block.control {
                let packed = UInt8(control.disposal << 2) | (control.transparent == nil ? 0 : 1)
                out += [0x21, 0xF9, 4, packed] + le16(control.delay) + [UInt8(control.transparent ?? 0), 0]
            }
            out += [0x2C] + le16(block.left) + le16(block.top) + le16(block.width) + le16(block.height)
            var flags: UInt8 = block.interlaced ? 0x40 : 0
            var local: [UInt8] = []
            if let palette = block.localPalette {
                let size = tableSize(palette.count / 3)
                flags |= 0x80 | UInt8(size.bits - 1)
                local = palette + [UInt8](repeating: 0, count: 3 * size.entries - palette.count)
            }
            out += [flags] + local + [8] + subBlocks(lzw(block.indices))
        }
        if trailer { out.append(0x3B) }
        return Data(out)
    }

    static func loopExtension(_ count: Int, application: String = "NETSCAPE2.0") -> [UInt8] {
        [0x21, 0xFF, 11] + Array(application.utf8) + [3, 1] + le16(count) + [0]
    }

    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }

    static func tableSize(_ colors: Int) -> (bits: Int, entries: Int) {
        var bits = 1
        while 1 << bits < colors { bits += 1 }
        return (bits, 1 << bits)
    }

    static func lzw(_ indices: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        var accumulator = 0, bitCount = 0
        func put(_ code: Int) {
            accumulator |= code << bitCount
            bitCount += 9
            while bitCount >= 8 {
                bytes.append(UInt8(accumulator & 0xFF))
                accumulator >>= 8
                bitCount -= 8
            }
        }
        for (i, index) in indices.enumerated() {
            if i % 250 == 0 { put(256) }
            put(Int(index))
        }
        put(257)
        if bitCount > 0 { bytes.append(UInt8(accumulator & 0xFF)) }
        return bytes
    }

    static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        while start < data.count {
            let end = min(start + 255, data.count)
            out += [UInt8(end - start)] + data[start..<end]
            start = end
        }
        return out + [0]
    }

    /// A frame of `width` x `height` drawn from a handful of colours, different per `seed`,
    /// with a transparent corner.
    static func fewColorFrame(width: Int, height: Int, seed: Int) throws -> PixelBuffer {
        let colors: [RGBAColor] = [
            .init(red: 255, green: 0, blue: 0), .init(red: 0, green: 200, blue: 30), .init(red: 10, green: 20, blue: 250),
            .init(red: 250, green: 250, blue: 250), .init(red: 0, green: 0, blue: 0), .init(red: 128, green: 64, blue: 32),
        ]
        var pixels = try PixelBuffer(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                if x < 3 && y < 3 { continue }  // stays fully transparent
                pixels[x, y] = colors[(x / 2 + y / 3 + seed) % colors.count]
            }
        }
        return pixels
    }

    /// A smooth, photo-like image with far more than 256 colours.
    static func photo(width: Int, height: Int) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                bytes[i] = UInt8(127.5 + 127.5 * sin(fx * 5 + fy * 2))
                bytes[i + 1] = UInt8(255 * fy)
                bytes[i + 2] = UInt8(127.5 + 127.5 * cos(fx * 3 - fy * 4))
            }
        }
        return try PixelBuffer(width: width, height: height, rgba: bytes)
    }

    /// RGBA with fully transparent pixels set to 0,0,0,0 and other alpha values made opaque
    /// or transparent at 128, which is what a GIF round trip keeps.
    static func gifVisible(_ pixels: PixelBuffer) -> [UInt8] {
        var bytes = pixels.rgbaBytes
        for i in stride(from: 0, to: bytes.count, by: 4) {
            if bytes[i + 3] < 128 {
                bytes[i] = 0; bytes[i + 1] = 0; bytes[i + 2] = 0; bytes[i + 3] = 0
            } else {
                bytes[i + 3] = 255
            }
        }
        return bytes
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}

private extension MagpieError.DecodingFailureReason {
    var gifMessage: String? {
        switch self {
        case .corruptData(_, let message), .truncatedData(_, let message), .tooLarge(_, let message): message
        default: nil
        }
    }
    var isTruncation: Bool { if case .truncatedData(.gif, _) = self { true } else { false } }
    var isCorruption: Bool { if case .corruptData(.gif, _) = self { true } else { false } }
    var isTooLargeGIF: Bool { if case .tooLarge(.gif, _) = self { true } else { false } }
}

struct GIFCoderTests {
    let coder = GIFCoder()

    private func animation(frames: Int = 3, loopCount: Int? = 3) throws -> Image {
        let delays = [100, 250, 40, 1000, 0, 70]
        let list = try (0..<frames).map { i in
            ImageFrame(
                pixels: try GIFFixtures.fewColorFrame(width: 17, height: 11, seed: i),
                duration: .milliseconds(delays[i % delays.count]))
        }
        return try Image(frames: list, loopCount: loopCount)
    }

    // MARK: Encoding round trips

    @Test func gifCoderAdvertisesEncoding() {
        #expect(coder.format == .gif)
        #expect(coder.canEncode)
    }

    @Test func roundTripOfFewColourAnimationIsPixelExactWithDelaysAndLoop() throws {
        let source = try animation(frames: 4, loopCount: 3)
        let data = try coder.encode(source, options: .default)
        #expect(ImageFormat(sniffing: data) == .gif)
        let decoded = try coder.decode(data, options: .default)
        #expect(decoded.format == .gif)
        #expect(decoded.frames.count == 4)
        #expect(decoded.loopCount == 3)
        #expect(decoded.frames.map { GIFFixtures.milliseconds($0.duration) } == [100, 250, 40, 1000])
        for (original, copy) in zip(source.frames, decoded.frames) {
            #expect(GIFFixtures.gifVisible(copy.pixels) == GIFFixtures.gifVisible(original.pixels))
        }
    }

    @Test func loopForeverIsStoredAsZeroAndMissingLoopCountWritesNoLoopBlock() throws {
        let forever = try coder.decode(coder.encode(animation(loopCount: 0), options: .default), options: .default)
        #expect(forever.loopCount == 0)
        let once = try coder.decode(coder.encode(animation(loopCount: nil), options: .default), options: .default)
        #expect(once.loopCount == nil)
        #expect(once.frames.count == 3)
    }

    @Test func delaysAreRoundedToCentiseconds() throws {
        let pixels = try GIFFixtures.fewColorFrame(width: 4, height: 4, seed: 0)
        let image = try Image(
            frames: [ImageFrame(pixels: pixels, duration: .milliseconds(14)),
                     ImageFrame(pixels: pixels, duration: .milliseconds(15)),
                     ImageFrame(pixels: pixels, duration: .seconds(2))],
            loopCount: 0)
        let decoded = try coder.decode(coder.encode(image, options: .default), options: .default)
        #expect(decoded.frames.map { GIFFixtures.milliseconds($0.duration) } == [10, 20, 2000])
    }

    @Test func transparencySurvivesAndPartialAlphaIsThresholdedAt128() throws {
        var pixels = try PixelBuffer(width: 4, height: 1, fill: .clear)
        pixels[1, 0] = RGBAColor(red: 200, green: 10, blue: 10, alpha: 127)
        pixels[2, 0] = RGBAColor(red: 10, green: 200, blue: 10, alpha: 128)
        pixels[3, 0] = RGBAColor(red: 10, green: 10, blue: 200, alpha: 255)
        let decoded = try coder.decode(coder.encode(Image(pixels: pixels), options: .default), options: .default)
        #expect(decoded.pixels[0, 0].alpha == 0)
        #expect(decoded.pixels[1, 0].alpha == 0)
        #expect(decoded.pixels[2, 0] == RGBAColor(red: 10, green: 200, blue: 10))
        #expect(decoded.pixels[3, 0] == RGBAColor(red: 10, green: 10, blue: 200))
    }

    @Test func transparentAreasOfLaterFramesDoNotShowEarlierFrames() throws {
        let opaque = try PixelBuffer(width: 3, height: 3, fill: .init(red: 9, green: 99, blue: 199))
        let clear = try PixelBuffer(width: 3, height: 3, fill: .clear)
        let image = try Image(frames: [ImageFrame(pixels: opaque), ImageFrame(pixels: clear)], loopCount: 0)
        let decoded = try coder.decode(coder.encode(image, options: .default), options: .default)
        #expect(decoded.frames[1].pixels.rgbaBytes.allSatisfy { $0 == 0 })
    }

    @Test func stillImagesAndOnlyFirstFrameEncodingWriteOneFrame() throws {
        let still = try coder.decode(
            coder.encode(Image(pixels: try GIFFixtures.fewColorFrame(width: 5, height: 5, seed: 1)), options: .default),
            options: .default)
        #expect(still.frames.count == 1 && still.loopCount == nil)
        let first = try coder.decode(coder.encode(animation(), options: .init(onlyFirstFrame: true)), options: .default)
        #expect(first.frames.count == 1)
        #expect(GIFFixtures.gifVisible(first.pixels) == GIFFixtures.gifVisible(try animation().frames[0].pixels))
    }

    @Test func exactlyTwoHundredFiftySixColoursGiveAnExactPalette() throws {
        var pixels = try PixelBuffer(width: 16, height: 16)
        for i in 0..<256 { pixels[i % 16, i / 16] = RGBAColor(red: UInt8(i), green: UInt8(255 - i), blue: UInt8(i / 2)) }
        let result = ColorQuantizer().quantize(pixels)
        #expect(result.palette.isExact && result.palette.count == 256 && result.palette.transparentIndex == nil)
        let decoded = try coder.decode(coder.encode(Image(pixels: pixels), options: .default), options: .default)
        #expect(decoded.pixels == pixels)
    }

    @Test func transparentEntryCountsTowardsTheExactPaletteLimit() throws {
        var pixels = try PixelBuffer(width: 16, height: 17, fill: .clear)
        for i in 0..<256 { pixels[i % 16, i / 16] = RGBAColor(red: UInt8(i), green: 7, blue: 9) }
        let palette = ColorQuantizer().quantize(pixels).palette
        #expect(!palette.isExact)
        #expect(palette.count <= 256 && palette.transparentIndex != nil)
    }

    /// Mean absolute error per channel between `photo` and its quantized version, per pixel and
    /// over 4x4 blocks (what the eye averages, and what dithering preserves).
    private func quantizationError(_ photo: PixelBuffer, _ palette: ColorQuantizer.Palette, _ indices: [UInt8])
        -> (pixel: Double, block: Double)
    {
        let source = photo.rgbaBytes, w = photo.width, h = photo.height
        var pixel = 0, block = 0
        for by in 0..<(h / 4) {
            for bx in 0..<(w / 4) {
                for c in 0..<3 {
                    var signed = 0
                    for y in by * 4..<by * 4 + 4 {
                        for x in bx * 4..<bx * 4 + 4 {
                            let i = y * w + x
                            let d = Int(source[i * 4 + c]) - Int(palette.colors[Int(indices[i]) * 3 + c])
                            signed += d
                            pixel += abs(d)
                        }
                    }
                    block += abs(signed)
                }
            }
        }
        let samples = Double((w / 4) * (h / 4) * 3)
        return (Double(pixel) / (samples * 16), Double(block) / (samples * 16))
    }

    @Test func quantizerKeepsMeanErrorSmallOnAPhotoLikeImage() throws {
        let photo = try GIFFixtures.photo(width: 256, height: 192)
        let plain = ColorQuantizer(dithering: false).quantize(photo)
        #expect(!plain.palette.isExact && plain.palette.count == 256)
        // Plain k-means with 256 colours reaches about 5.1 on this image.
        #expect(quantizationError(photo, plain.palette, plain.indices).pixel < 6)

        let dithered = ColorQuantizer().quantize(photo)
        #expect(quantizationError(photo, dithered.palette, dithered.indices).block < 2.5)
    }

    @Test func encodingAPhotoRoundTripsCloseToTheSource() throws {
        let photo = try GIFFixtures.photo(width: 200, height: 120)
        let decoded = try coder.decode(coder.encode(Image(pixels: photo), options: .default), options: .default)
        #expect(decoded.pixels.isOpaque)
        let (palette, indices) = ColorQuantizer().quantize(photo)
        var expected = [UInt8]()
        for index in indices { expected += palette.colors[Int(index) * 3..<Int(index) * 3 + 3] + [255] }
        #expect(decoded.pixels.rgbaBytes == expected)
    }

    @Test func quantizerWithoutDitheringMapsUniformAreasToOneColour() throws {
        var photo = try GIFFixtures.photo(width: 64, height: 64)
        for x in 0..<64 { photo[x, 0] = RGBAColor(red: 12, green: 34, blue: 56) }
        let (palette, indices) = ColorQuantizer(dithering: false).quantize(photo)
        #expect(!palette.isExact)
        #expect(Set(indices[0..<64]).count == 1)
    }

    // MARK: Decoding hand-built files

    @Test func firstFrameIsDrawnAtItsOffsetOnATransparentCanvasAndClipped() throws {
        let block = GIFFixtures.Block(left: 2, top: 1, width: 3, height: 2, indices: [0, 1, 0, 1, 0, 1])
        let data = GIFFixtures.gif(width: 4, height: 2, palette: [255, 0, 0, 0, 0, 255], blocks: [block])
        let image = try coder.decode(data, options: .default)
        #expect(image.width == 4 && image.height == 2 && image.frames.count == 1)
        #expect(image.pixels[0, 0] == .clear && image.pixels[1, 1] == .clear)
        #expect(image.pixels[2, 1] == RGBAColor(red: 255, green: 0, blue: 0))
        #expect(image.pixels[3, 1] == RGBAColor(red: 0, green: 0, blue: 255))
    }

    @Test func indicesPastThePaletteAreOpaqueBlack() throws {
        let block = GIFFixtures.Block(width: 2, height: 1, indices: [1, 200])
        let data = GIFFixtures.gif(width: 2, height: 1, palette: [1, 2, 3, 40, 50, 60], blocks: [block])
        let image = try coder.decode(data, options: .default)
        #expect(image.pixels[0, 0] == RGBAColor(red: 40, green: 50, blue: 60))
        #expect(image.pixels[1, 0] == RGBAColor(red: 0, green: 0, blue: 0, alpha: 255))
    }

    @Test func interlacedRowsAreReordered() throws {
        // Rows 0...8 hold index = row; interlaced order is 0 8 | 4 | 2 6 | 1 3 5 7.
        let order = [0, 8, 4, 2, 6, 1, 3, 5, 7]
        var palette: [UInt8] = []
        for i in 0..<9 { palette += [UInt8(i * 20), 0, 0] }
        let block = GIFFixtures.Block(width: 1, height: 9, indices: order.map { UInt8($0) }, interlaced: true)
        let image = try coder.decode(GIFFixtures.gif(width: 1, height: 9, palette: palette, blocks: [block]), options: .default)
        for row in 0..<9 { #expect(image.pixels[0, row].red == UInt8(row * 20)) }
    }

    @Test func disposalMethodsCompositeLaterFrames() throws {
        let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255]
        let red = RGBAColor(red: 255, green: 0, blue: 0), green = RGBAColor(red: 0, green: 255, blue: 0)
        let blue = RGBAColor(red: 0, green: 0, blue: 255)
        let blocks = [
            // Full red canvas, kept.
            GIFFixtures.Block(width: 2, height: 2, indices: [0, 0, 0, 0], control: (1, 10, nil)),
            // Green at (0,0), restored to the red canvas afterwards.
            GIFFixtures.Block(width: 1, height: 1, indices: [1], control: (3, 10, nil)),
            // Blue at (1,1) with a transparent pixel at (1,0); its area is cleared afterwards.
            GIFFixtures.Block(left: 1, top: 0, width: 1, height: 2, indices: [2, 2], localPalette: nil,
                              control: (2, 10, nil)),
            // Only a transparent pixel, no control block for delay: shows what disposal left.
            GIFFixtures.Block(width: 1, height: 1, indices: [1], control: (0, 0, 1)),
        ]
        let data = GIFFixtures.gif(width: 2, height: 2, palette: palette, blocks: blocks)
        let image = try coder.decode(data, options: .default)
        #expect(image.frames.count == 4)
        let f = image.frames.map(\.pixels)
        #expect(f[0][0, 0] == red && f[0][1, 1] == red)
        #expect(f[1][0, 0] == green && f[1][1, 0] == red)
        #expect(f[2][0, 0] == red && f[2][1, 0] == blue && f[2][1, 1] == blue)
        #expect(f[3][0, 0] == red && f[3][1, 0] == .clear && f[3][1, 1] == .clear && f[3][0, 1] == red)
    }

    @Test func restoreToPreviousOnTheFirstFrameRestoresTransparency() throws {
        let blocks = [
            GIFFixtures.Block(width: 1, height: 1, indices: [0], control: (3, 5, nil)),
            GIFFixtures.Block(left: 1, top: 0, width: 1, height: 1, indices: [0], control: (1, 5, nil)),
        ]
        let image = try coder.decode(GIFFixtures.gif(width: 2, height: 1, palette: [9, 9, 9, 0, 0, 0], blocks: blocks),
                                     options: .default)
        #expect(image.frames[1].pixels[0, 0] == .clear)
        #expect(image.frames[1].pixels[1, 0] == RGBAColor(red: 9, green: 9, blue: 9))
    }

    @Test func everyImageBlockIsAFrameAndDelaysWithoutControlBlockAreZero() throws {
        let blocks = [
            GIFFixtures.Block(width: 1, height: 1, indices: [0]),
            GIFFixtures.Block(width: 1, height: 1, indices: [1], control: (0, 0, nil)),
            GIFFixtures.Block(width: 1, height: 1, indices: [0], control: (0, 7, nil)),
        ]
        let image = try coder.decode(
            GIFFixtures.gif(width: 1, height: 1, palette: [0, 0, 0, 255, 255, 255], blocks: blocks), options: .default)
        #expect(image.frames.map { GIFFixtures.milliseconds($0.duration) } == [0, 0, 70])
        #expect(image.loopCount == nil)
    }

    @Test func loopCountComesFromTheFirstLoopBlockIncludingANIMEXTS() throws {
        let blocks = [GIFFixtures.Block(width: 1, height: 1, indices: [0]), GIFFixtures.Block(width: 1, height: 1, indices: [0])]
        let animexts = GIFFixtures.gif(
            width: 1, height: 1, palette: [0, 0, 0], before: GIFFixtures.loopExtension(5, application: "ANIMEXTS1.0"),
            blocks: blocks)
        #expect(try coder.decode(animexts, options: .default).loopCount == 5)
        let twice = GIFFixtures.gif(
            width: 1, height: 1, palette: [0, 0, 0],
            before: GIFFixtures.loopExtension(2) + GIFFixtures.loopExtension(3), blocks: blocks)
        #expect(try coder.decode(twice, options: .default).loopCount == 2)
    }

    @Test func missingTrailerIsTruncationEvenAfterCompleteFrames() throws {
        // A cut between two frames looks exactly like this, so it must not pass as complete.
        let blocks = [GIFFixtures.Block(width: 1, height: 1, indices: [0]), GIFFixtures.Block(width: 1, height: 1, indices: [1])]
        let data = GIFFixtures.gif(width: 1, height: 1, palette: [0, 0, 0, 9, 9, 9], blocks: blocks, trailer: false)
        #expect(TestImages.decodingReason { try coder.decode(data, options: .default) }?.isTruncation == true)
        #expect(try coder.decode(data, options: .init(onlyFirstFrame: true)).frames.count == 1)
        let complete = GIFFixtures.gif(width: 1, height: 1, palette: [0, 0, 0, 9, 9, 9], blocks: blocks)
        #expect(try coder.decode(complete + Data([1, 2, 3]), options: .default).frames.count == 2)
    }

    // MARK: Errors and limits

    @Test func dataCutAnywhereBeforeTheTrailerIsTruncated() throws {
        let data = try coder.encode(animation(frames: 3), options: .default)
        var wrong: [Int] = []
        for cut in 1..<data.count {
            let reason = TestImages.decodingReason { try coder.decode(data.prefix(cut), options: .default) }
            if reason?.isTruncation != true { wrong.append(cut) }
        }
        #expect(wrong.isEmpty, "cuts not reported as truncated: \(wrong)")
    }

    @Test func garbageAfterTheHeaderIsCorrupt() throws {
        var bytes = [UInt8](GIFFixtures.gif(width: 2, height: 2, palette: [0, 0, 0],
                                            blocks: [GIFFixtures.Block(width: 2, height: 2, indices: [0, 0, 0, 0])]))
        let header = 13 + 6  // signature + screen descriptor + 2-entry palette
        for i in header..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: 0x99 &+ i * 37) }
        let reason = TestImages.decodingReason { try coder.decode(Data(bytes), options: .default) }
        #expect(reason?.isCorruption == true, "\(String(describing: reason))")
    }

    @Test func imageBlockWithZeroSizeIsCorrupt() {
        let data = GIFFixtures.gif(width: 1, height: 1, palette: [0, 0, 0], blocks: [GIFFixtures.Block(width: 0, height: 1, indices: [])])
        #expect(TestImages.decodingReason { try coder.decode(data, options: .default) }?.isCorruption == true)
    }

    @Test func fileWithoutImagesIsAnError() {
        let data = GIFFixtures.gif(width: 1, height: 1, palette: [0, 0, 0], blocks: [])
        #expect(TestImages.decodingReason { try coder.decode(data, options: .default) }?.isCorruption == true)
    }

    @Test func logicalScreenOverThePixelLimitIsTooLargeBeforeAllocation() {
        // 65535 x 65535 would need 17 GB: the refusal must come from the header alone.
        let data = GIFFixtures.gif(width: 65535, height: 65535, palette: [0, 0, 0],
                                   blocks: [GIFFixtures.Block(width: 1, height: 1, indices: [0])])
        let reason = TestImages.decodingReason { try coder.decode(data, options: .default) }
        #expect(reason?.isTooLargeGIF == true)
        #expect(reason?.gifMessage?.contains("65535x65535") == true)
        #expect(reason?.gifMessage?.contains("100000000") == true)
    }

    @Test func imageBlockOverThePixelLimitIsTooLarge() {
        let data = GIFFixtures.gif(width: 4, height: 4, palette: [0, 0, 0],
                                   blocks: [GIFFixtures.Block(width: 20000, height: 20000, indices: [0])])
        #expect(TestImages.decodingReason { try coder.decode(data, options: .default) }?.isTooLargeGIF == true)
    }

    @Test func imageBlocksFarOutsideTheCanvasCountAgainstTheMemoryBudget() {
        // Clipped blocks cost decoding time, not memory: they share the frames' budget.
        let blocks = (0..<3).map { _ in GIFFixtures.Block(left: 5000, top: 0, width: 100, height: 100, indices: [UInt8](repeating: 0, count: 10000)) }
        let data = GIFFixtures.gif(width: 2, height: 2, palette: [0, 0, 0], blocks: blocks)
        let limited = ImageDecodingOptions(limits: .init(maxTotalBytes: 25_000 * 4))
        #expect(TestImages.decodingReason { try coder.decode(data, options: limited) }?.isTooLargeGIF == true)
        #expect((try? coder.decode(data, options: .default))?.frames.count == 3)
    }

    @Test func frameCountLimitIsEnforced() throws {
        let data = try coder.encode(animation(frames: 5), options: .default)
        let limited = ImageDecodingOptions(limits: .init(maxFrameCount: 3))
        let reason = TestImages.decodingReason { try coder.decode(data, options: limited) }
        #expect(reason?.isTooLargeGIF == true)
        #expect(reason?.gifMessage?.contains("3") == true)
        #expect(try coder.decode(data, options: .init(limits: .init(maxFrameCount: 5))).frames.count == 5)
    }

    @Test func totalFrameMemoryLimitIsEnforced() throws {
        let data = try coder.encode(animation(frames: 4), options: .default)
        let frameBytes = 17 * 11 * 4
        let limited = ImageDecodingOptions(limits: .init(maxTotalBytes: frameBytes * 3 + 1))
        #expect(TestImages.decodingReason { try coder.decode(data, options: limited) }?.isTooLargeGIF == true)
        #expect(try coder.decode(data, options: .init(limits: .init(maxTotalBytes: frameBytes * 4))).frames.count == 4)
    }

    @Test func onlyFirstFrameStopsAfterTheFirstImageBlock() throws {
        var data = try coder.encode(animation(frames: 4), options: .default)
        data = data.prefix(data.count * 3 / 4)  // later frames broken: never read
        let image = try coder.decode(data, options: .init(onlyFirstFrame: true))
        #expect(image.frames.count == 1 && image.loopCount == nil && image.format == .gif)
        #expect(GIFFixtures.gifVisible(image.pixels) == GIFFixtures.gifVisible(try animation().frames[0].pixels))
    }

    @Test func concurrentDecodesAgree() async throws {
        let data = try coder.encode(animation(frames: 6), options: .default)
        let expected = try coder.decode(data, options: .default)
        let coder = self.coder
        let results = try await withThrowingTaskGroup(of: Image.self) { group in
            for _ in 0..<16 { group.addTask { try coder.decode(data, options: .default) } }
            return try await group.reduce(into: [Image]()) { $0.append($1) }
        }
        #expect(results.count == 16)
        for image in results { #expect(image == expected) }
    }
}
