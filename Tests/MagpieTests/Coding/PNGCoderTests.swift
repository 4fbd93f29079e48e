import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct PNGCoderTests {
    let coder = PNGCoder()

    @Test func translucentRoundTripIsExact() throws {
        let source = try TestImages.gradient(width: 97, height: 61, alpha: true)
        let data = try coder.encode(Image(pixels: source), options: .default)
        let image = try coder.decode(data, options: .default)
        #expect(image.pixels == source)
        #expect(image.format == .png)
    }

    @Test func opaqueImagesAreWrittenAsRGB() throws {
        let data = try coder.encode(Image(pixels: try TestImages.gradient(width: 40, height: 30)), options: .default)
        #expect(data[25] == 2, "IHDR colour type should be 2 (RGB)")
        let translucent = try coder.encode(Image(pixels: try TestImages.gradient(width: 40, height: 30, alpha: true)), options: .default)
        #expect(translucent[25] == 6, "IHDR colour type should be 6 (RGBA)")
    }

    private func animation() throws -> Image {
        let frames = try (0..<4).map { i -> ImageFrame in
            var pixels = try PixelBuffer(width: 20, height: 10, fill: .clear)
            for x in 0..<5 { pixels[i * 5 + x, 5] = RGBAColor(red: 200, green: UInt8(i * 40), blue: 10) }
            return ImageFrame(pixels: pixels, duration: .milliseconds(40 * (i + 1)))
        }
        return try Image(frames: frames, loopCount: 3)
    }

    @Test func apngRoundTripKeepsFramesDelaysAndLoopCount() throws {
        let source = try animation()
        let data = try coder.encode(source, options: .default)
        let image = try coder.decode(data, options: .default)
        #expect(image.frames.count == 4)
        #expect(image.loopCount == 3)
        #expect(image.frames.map(\.duration) == [.milliseconds(40), .milliseconds(80), .milliseconds(120), .milliseconds(160)])
        for (decoded, original) in zip(image.frames, source.frames) { #expect(decoded.pixels == original.pixels) }
        let first = try coder.decode(data, options: .init(onlyFirstFrame: true))
        #expect(first.frames.count == 1 && first.pixels == source.pixels)
    }

    @Test func brokenAnimationFallsBackToTheStillImage() throws {
        var data = try coder.encode(try animation(), options: .default)
        // Corrupt the sequence number of the second fcTL (and fix its CRC) so the animation is invalid.
        let (chunks, _) = PNGChunks.read(data)
        var rebuilt = PNGChunks.signature
        var fcTLCount = 0
        for chunk in chunks {
            var payload = chunk.data
            if chunk.type == "fcTL" {
                fcTLCount += 1
                if fcTLCount == 2 { payload[payload.startIndex + 3] = 99 }
            }
            PNGChunks.write(chunk.type, Data(payload), to: &rebuilt)
        }
        data = rebuilt
        let image = try coder.decode(data, options: .default)
        #expect(image.frames.count == 1)
        #expect(image.pixels == (try animation()).pixels)
    }

    /// Ways to break the APNG chunk rules, each applied to a valid 4-frame animation.
    enum APNGViolation: String, CaseIterable, Sendable {
        case secondACTLBeforeIDAT, secondACTLAfterIDAT, fcTLOutOfSequence, fdATOutOfSequence
        case moreFramesDeclared, fewerFramesDeclared, frameOutsideCanvas

        func apply(to chunks: [PNGChunk]) -> Data {
            var out = PNGChunks.signature
            var fcTLs = 0, fdATs = 0
            for chunk in chunks {
                var payload = Data(chunk.data)
                let s = payload.startIndex
                switch (self, chunk.type) {
                case (.secondACTLAfterIDAT, "IDAT"):
                    PNGChunks.write("IDAT", payload, to: &out)
                    PNGChunks.write("acTL", chunks.first { $0.type == "acTL" }!.data, to: &out)
                    continue
                case (.secondACTLBeforeIDAT, "acTL"): PNGChunks.write("acTL", payload, to: &out)
                case (.moreFramesDeclared, "acTL"): payload[s + 3] += 1
                case (.fewerFramesDeclared, "acTL"): payload[s + 3] -= 1
                case (.fcTLOutOfSequence, "fcTL"):
                    fcTLs += 1
                    if fcTLs == 3 { payload[s + 3] += 1 }  // skips a number: every later one is off too
                case (.fdATOutOfSequence, "fdAT"):
                    fdATs += 1
                    if fdATs == 1 { payload[s + 3] = 0 }  // repeats fcTL 0's number
                case (.frameOutsideCanvas, "fcTL"):
                    fcTLs += 1
                    if fcTLs == 2 { payload[s + 14] = 1 }  // x offset 256 on a 20-pixel canvas
                default: break
                }
                PNGChunks.write(chunk.type, payload, to: &out)
            }
            return out
        }
    }

    @Test("every violation of the APNG chunk rules decodes as the static default image", arguments: APNGViolation.allCases)
    func apngViolationFallsBackToTheStillImage(_ violation: APNGViolation) throws {
        let valid = try coder.encode(try animation(), options: .default)
        let broken = violation.apply(to: PNGChunks.read(valid).chunks)
        #expect(broken != valid)
        let image = try coder.decode(broken, options: .default)
        #expect(image.frames.count == 1, "\(violation): \(image.frames.count) frames")
        #expect(image.pixels == (try animation()).pixels)
    }

    @Test func animationFrameLimitIsEnforced() throws {
        let data = try coder.encode(try animation(), options: .default)
        let reason = TestImages.decodingReason {
            try coder.decode(data, options: .init(limits: .init(maxFrameCount: 2)))
        }
        #expect(reason?.isTooLarge == true)
    }

    @Test func hugeHeaderIsRefusedBeforeAllocation() throws {
        var file = PNGChunks.signature
        var ihdr = Data()
        PNGChunks.appendUInt32(100_000, to: &ihdr)
        PNGChunks.appendUInt32(100_000, to: &ihdr)
        ihdr.append(contentsOf: [8, 6, 0, 0, 0])
        PNGChunks.write("IHDR", ihdr, to: &file)
        PNGChunks.write("IDAT", Data([0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]), to: &file)
        PNGChunks.write("IEND", Data(), to: &file)
        let reason = TestImages.decodingReason { try coder.decode(file, options: .default) }
        #expect(reason?.isTooLarge == true, "\(String(describing: reason))")
    }

    @Test func truncatedDataIsATruncationError() throws {
        let data = try coder.encode(Image(pixels: try TestImages.gradient(width: 200, height: 200, alpha: true)), options: .default)
        let reason = TestImages.decodingReason { try coder.decode(data.prefix(data.count * 2 / 3), options: .default) }
        #expect(reason?.isTruncated == true, "\(String(describing: reason))")
    }

    @Test func badCRCInImageDataIsACorruptionError() throws {
        var data = try coder.encode(Image(pixels: try TestImages.gradient(width: 64, height: 64)), options: .default)
        let (chunks, _) = PNGChunks.read(data)
        let idatOffset = data.range(of: Data("IDAT".utf8))!.lowerBound
        data[idatOffset + 4 + chunks.first { $0.type == "IDAT" }!.data.count / 2] ^= 0x55
        let reason = TestImages.decodingReason { try coder.decode(data, options: .default) }
        #expect(reason?.isCorrupt == true, "\(String(describing: reason))")
    }
}

extension PNGCoderTests {
    /// Found by fuzzing: an sPLT chunk declaring 1.9 GB in a tiny file made libpng
    /// allocate the declared length. Now the chunk is refused and the file ends as truncated.
    @Test func hugeDeclaredChunkLengthEndsAsTruncationNotAllocation() throws {
        var file = PNGChunks.signature
        PNGChunks.write("IHDR", Data([0, 0, 0, 1, 0, 0, 0, 1, 1, 3, 0, 0, 0]), to: &file)
        file.append(contentsOf: [0x73, 0x76, 0x00, 0x00] + Array("sPLT".utf8) + [0x04, 0xB8, 0x6B, 0x3A])
        file.append(Data(repeating: 0, count: 600))
        let reason = TestImages.decodingReason { try coder.decode(file, options: .default) }
        #expect(reason?.isTruncated == true || reason?.isCorrupt == true, "\(String(describing: reason))")
    }
}

extension PNGCoderTests {
    /// Found by fuzzing the corpus (a 57-byte file from libspng's crash set): libpng 1.6.39 allocated and cleared the
    /// 1 GiB an sCAL chunk declared, in spite of the chunk malloc cap — a memory bomb per decode. A walk over the chunk
    /// lengths ahead of libpng now refuses the file before libpng reads it.
    @Test func chunkLongerThanTheFileIsRefusedBeforeLibpngAllocatesIt() throws {
        var file = PNGChunks.signature
        PNGChunks.write("IHDR", Data([0, 0, 0, 1, 0, 0, 0, 1, 1, 3, 0, 0, 0]), to: &file)
        file.append(contentsOf: [0x3F, 0xFF, 0xFF, 0xFF] + Array("sCAL".utf8) + Array(repeating: 0, count: 12))
        let before = Self.peakRSSKiB()
        let error = try #require(throws: MagpieError.self) { try coder.decode(file, options: .default) }
        #expect(error.decodingReason?.isTruncated == true)
        #expect(error.description.contains("sCAL declares 1073741823 bytes"), "\(error)")
        // Without the walk the process's high-water mark rises by the whole gigabyte.
        #expect(Self.peakRSSKiB() - before < 512 * 1024)
    }

    /// The process's peak resident set so far, in KiB.
    static func peakRSSKiB() -> Int {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss
    }
}

extension PNGCoderTests {
    /// An APNG whose IHDR declares 4294967295 x 4294967295: the size arithmetic must not
    /// overflow (a trap would crash the process); the file is refused as too large.
    @Test func apngWithMaximalDeclaredCanvasIsRefusedWithoutOverflow() throws {
        let pixel = Data([0x78, 0x9C, 0x63, 0x60, 0, 0, 0, 2, 0, 1])  // zlib stream, any content
        var file = PNGChunks.signature
        PNGChunks.write("IHDR", Data([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 8, 6, 0, 0, 0]), to: &file)
        PNGChunks.write("acTL", Data([0, 0, 0, 1, 0, 0, 0, 0]), to: &file)
        PNGChunks.write("IDAT", pixel, to: &file)  // hidden default image: frame 0 comes from fdAT
        var fctl = Data([0, 0, 0, 0])
        PNGChunks.appendUInt32(1, to: &fctl); PNGChunks.appendUInt32(1, to: &fctl)
        PNGChunks.appendUInt32(0, to: &fctl); PNGChunks.appendUInt32(0, to: &fctl)
        fctl.append(contentsOf: [0, 1, 0, 100, 0, 0])
        PNGChunks.write("fcTL", fctl, to: &file)
        PNGChunks.write("fdAT", Data([0, 0, 0, 1]) + pixel, to: &file)
        PNGChunks.write("IEND", Data(), to: &file)
        let reason = TestImages.decodingReason { try coder.decode(file, options: .default) }
        #expect(reason?.isTooLarge == true, "\(String(describing: reason))")
    }
}

extension PNGCoderTests {
    @Test func frameLimitCountsOnlyTheFramesDecoded() throws {
        let data = try coder.encode(try animation(), options: .default)
        let first = try coder.decode(data, options: .init(onlyFirstFrame: true, limits: .init(maxFrameCount: 1)))
        #expect(first.frames.count == 1)
    }
}
