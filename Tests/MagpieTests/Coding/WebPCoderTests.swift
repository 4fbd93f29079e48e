import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// WebPCoder: fixtures are made here by encoding, then decoded back.
@Suite("WebP coder")
struct WebPCoderTests {
    let coder = WebPCoder()

    // MARK: Fixtures

    /// A smooth gradient with varying alpha, including fully transparent pixels that carry colour.
    static func gradient(width: Int, height: Int, seed: Int = 0, opaque: Bool = false) throws -> PixelBuffer {
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let p = (y * width + x) * 4
                rgba[p] = UInt8((x * 255 / max(1, width - 1) + seed * 40) & 0xFF)
                rgba[p + 1] = UInt8((y * 255 / max(1, height - 1) + seed * 80) & 0xFF)
                rgba[p + 2] = UInt8(((x + y) * 2 + seed * 17) & 0xFF)
                rgba[p + 3] = opaque ? 255 : (x < width / 8 ? 0 : UInt8(min(255, 64 + x * 4)))
            }
        }
        return try PixelBuffer(width: width, height: height, rgba: rgba)
    }


    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    static func le24(_ value: Int) -> [UInt8] { (0..<3).map { UInt8((value >> (8 * $0)) & 0xFF) } }

    static func chunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
        var bytes = Array(fourCC.utf8) + le32(payload.count) + payload
        if payload.count % 2 == 1 { bytes.append(0) }
        return bytes
    }

    static func riff(_ chunks: [UInt8]) -> Data {
        Data(Array("RIFF".utf8) + le32(4 + chunks.count) + Array("WEBP".utf8) + chunks)
    }

    /// A TIFF-structured EXIF payload holding only IFD0's orientation tag.
    static func exifPayload(orientation: Int) -> [UInt8] {
        Array("II*\0".utf8) + le32(8) + [1, 0] + [0x12, 0x01, 3, 0] + le32(1) + [UInt8(orientation), 0, 0, 0] + le32(0)
    }

    /// Rewraps a simple (RIFF + VP8L) WebP as an extended file with an EXIF chunk.
    static func withOrientation(_ simple: Data, width: Int, height: Int, orientation: Int) -> Data {
        let imageChunk = [UInt8](simple.dropFirst(12))
        let vp8x = chunk("VP8X", [0x08, 0, 0, 0] + le24(width - 1) + le24(height - 1))
        return riff(vp8x + imageChunk + chunk("EXIF", exifPayload(orientation: orientation)))
    }

    func animation(frameCount: Int = 3, lossless: Bool = true, loopCount: Int? = 3) throws -> (Image, Data) {
        let durations: [Duration] = [.milliseconds(100), .milliseconds(250), .milliseconds(40), .milliseconds(70)]
        let frames = try (0..<frameCount).map { index in
            ImageFrame(
                pixels: try Self.gradient(width: 40, height: 30, seed: index + 1, opaque: true),
                duration: durations[index % durations.count])
        }
        let image = try Image(frames: frames, loopCount: loopCount)
        return (image, try coder.encode(image, options: ImageEncodingOptions(lossless: lossless)))
    }

    // MARK: Round trips

    @Test("lossless round trip is pixel-exact, including alpha and colour under transparency")
    func losslessRoundTripIsExact() throws {
        let pixels = try Self.gradient(width: 67, height: 45)
        let data = try coder.encode(Image(pixels: pixels), options: ImageEncodingOptions(lossless: true))
        #expect(ImageFormat(sniffing: data) == .webp)
        let decoded = try coder.decode(data, options: .default)
        #expect(decoded.format == .webp)
        #expect(decoded.frames.count == 1)
        #expect(decoded.loopCount == nil)
        #expect(decoded.pixels == pixels)
    }

    @Test("lossy round trip stays close to the original and higher quality makes larger files")
    func lossyRoundTripIsCloseAndQualityMatters() throws {
        let pixels = try Self.gradient(width: 96, height: 64, opaque: true)
        let image = Image(pixels: pixels)
        let high = try coder.encode(image, options: ImageEncodingOptions(quality: 95))
        let low = try coder.encode(image, options: ImageEncodingOptions(quality: 10))
        #expect(high.count > low.count)
        let decoded = try coder.decode(high, options: .default)
        #expect(decoded.width == 96 && decoded.height == 64)
        #expect(TestImages.meanError(decoded.pixels, pixels) < 3)
    }

    @Test("lossy encoding keeps translucency")
    func lossyKeepsAlpha() throws {
        let pixels = try Self.gradient(width: 64, height: 32)
        let data = try coder.encode(Image(pixels: pixels), options: ImageEncodingOptions(quality: 90))
        let decoded = try coder.decode(data, options: .default)
        #expect(decoded.pixels[0, 0].alpha == 0)
        #expect(decoded.pixels[63, 31].alpha == pixels[63, 31].alpha)
    }

    @Test("quality outside 1...100 is an invalid option for lossy encoding")
    func invalidQualityIsRejected() throws {
        let image = Image(pixels: try Self.gradient(width: 8, height: 8))
        #expect(throws: MagpieError.self) { try coder.encode(image, options: ImageEncodingOptions(quality: 0)) }
        #expect(throws: MagpieError.self) { try coder.encode(image, options: ImageEncodingOptions(quality: 101)) }
    }

    @Test("an image wider than WebP's 16383-pixel limit fails with the libwebp error name")
    func oversizedEncodeFails() throws {
        let image = Image(pixels: try PixelBuffer(width: 16384, height: 1))
        do {
            _ = try coder.encode(image, options: .default)
            Issue.record("encoding succeeded")
        } catch let MagpieError.encodingFailed(reason: .encoderFailed(format, message)) {
            #expect(format == .webp)
            #expect(message.contains("VP8_ENC_ERROR_BAD_DIMENSION"))
        }
    }

    @Test("animated lossless round trip keeps frames, pixels, durations and loop count")
    func animatedRoundTripKeepsFramesDurationsAndLoopCount() throws {
        let (image, data) = try animation()
        let decoded = try coder.decode(data, options: .default)
        #expect(decoded.frames.count == 3)
        #expect(decoded.loopCount == 3)
        #expect(decoded.frames.map(\.duration) == image.frames.map(\.duration))
        for (got, expected) in zip(decoded.frames, image.frames) {
            #expect(got.pixels == expected.pixels)
        }
    }

    @Test("animated lossy round trip keeps frame count, durations and loop forever")
    func lossyAnimationRoundTripStaysCloseToTheSource() throws {
        let (image, data) = try animation(frameCount: 4, lossless: false, loopCount: 0)
        let decoded = try coder.decode(data, options: .default)
        #expect(decoded.frames.count == 4)
        #expect(decoded.loopCount == 0)
        #expect(decoded.frames.map(\.duration) == image.frames.map(\.duration))
        // Each frame should be about as close as the same pixels encoded as a still at the same quality.
        for (got, expected) in zip(decoded.frames, image.frames) {
            let still = try coder.decode(coder.encode(Image(pixels: expected.pixels), options: .default), options: .default)
            let stillError = TestImages.meanError(still.pixels, expected.pixels)
            let error = TestImages.meanError(got.pixels, expected.pixels)
            #expect(error < stillError * 1.5 + 1)
        }
    }

    @Test("onlyFirstFrame decodes just the first frame of an animation, and encodes a still")
    func onlyFirstFrameDecodesASingleStillFrame() throws {
        let (image, data) = try animation()
        let decoded = try coder.decode(data, options: ImageDecodingOptions(onlyFirstFrame: true))
        #expect(decoded.frames.count == 1)
        #expect(decoded.pixels == image.frames[0].pixels)
        let still = try coder.encode(image, options: ImageEncodingOptions(lossless: true, onlyFirstFrame: true))
        #expect(try coder.decode(still, options: .default).frames.count == 1)
    }

    // MARK: Errors

    @Test("truncated still and animated files throw truncatedData, never a partial image")
    func truncatedDataIsATruncationError() throws {
        let still = try coder.encode(
            Image(pixels: try Self.gradient(width: 64, height: 64)), options: ImageEncodingOptions(lossless: true))
        let (_, animated) = try animation()
        for data in [still, animated] {
            for cut in [5, 11, 20, data.count / 2, data.count - 1] {
                let reason = TestImages.decodingReason { try coder.decode(data.prefix(cut), options: .default) }
                guard case .truncatedData(.webp, _)? = reason else {
                    Issue.record("cut at \(cut) of \(data.count): \(String(describing: reason))")
                    continue
                }
            }
        }
    }

    @Test("empty data throws emptyData")
    func emptyDataIsReportedAsEmpty() {
        #expect(TestImages.decodingReason { try coder.decode(Data(), options: .default) } == .emptyData)
    }

    @Test("a damaged bitstream signature throws corruptData")
    func corruptPayloadIsACorruptionError() throws {
        var data = try coder.encode(
            Image(pixels: try Self.gradient(width: 32, height: 32)), options: ImageEncodingOptions(lossless: true))
        // Byte 20 opens the VP8L payload with its 0x2F signature.
        #expect(data[20] == 0x2F)
        data[20] = 0x00
        let reason = TestImages.decodingReason { try coder.decode(data, options: .default) }
        guard case .corruptData(.webp, _)? = reason else {
            Issue.record("expected corruptData, got \(String(describing: reason))")
            return
        }
    }

    @Test("a chunk size pointing past the RIFF end is not a complete file")
    func chunkSizePastTheEndOfTheDataIsAnError() throws {
        var data = try coder.encode(
            Image(pixels: try Self.gradient(width: 32, height: 32)), options: ImageEncodingOptions(lossless: true))
        data[16] = 0xFF  // VP8L chunk size, low byte
        data[17] = 0xFF
        #expect(throws: MagpieError.self) { try coder.decode(data, options: .default) }
    }

    @Test("a VP8X header declaring a 16384x16384 canvas is refused as tooLarge before decoding")
    func hugeCanvasIsTooLarge() {
        let data = Self.riff(Self.chunk("VP8X", [0, 0, 0, 0] + Self.le24(16383) + Self.le24(16383)))
        let reason = TestImages.decodingReason { try coder.decode(data, options: .default) }
        guard case .tooLarge(.webp, let message)? = reason else {
            Issue.record("expected tooLarge, got \(String(describing: reason))")
            return
        }
        #expect(message.contains("16384x16384"))
    }

    @Test("pixel, byte and frame limits are enforced from the header")
    func limitsAreEnforced() throws {
        let still = try coder.encode(
            Image(pixels: try Self.gradient(width: 64, height: 64)), options: ImageEncodingOptions(lossless: true))
        let (_, animated) = try animation()
        func isTooLarge(_ data: Data, _ limits: ImageDecodingLimits, onlyFirst: Bool = false) -> Bool {
            let options = ImageDecodingOptions(onlyFirstFrame: onlyFirst, limits: limits)
            if case .tooLarge(.webp, _)? = TestImages.decodingReason({ try coder.decode(data, options: options) }) { return true }
            return false
        }
        #expect(isTooLarge(still, ImageDecodingLimits(maxPixelsPerFrame: 4095)))
        #expect(!isTooLarge(still, ImageDecodingLimits(maxPixelsPerFrame: 4096)))
        #expect(isTooLarge(animated, ImageDecodingLimits(maxFrameCount: 2)))
        // Three 40x30 frames need 14,400 bytes.
        #expect(isTooLarge(animated, ImageDecodingLimits(maxTotalBytes: 14_399)))
        #expect(!isTooLarge(animated, ImageDecodingLimits(maxTotalBytes: 14_400)))
        #expect(!isTooLarge(animated, ImageDecodingLimits(maxTotalBytes: 4_800, maxFrameCount: 1), onlyFirst: true))
    }

    @Test("damaged files either decode completely or throw a MagpieError, never crash")
    func damagedFilesFailCleanly() throws {
        let (_, animated) = try animation(lossless: false)
        let inputs = [
            animated,
            try coder.encode(Image(pixels: try Self.gradient(width: 48, height: 40)), options: .default),
            try coder.encode(
                Image(pixels: try Self.gradient(width: 48, height: 40)), options: ImageEncodingOptions(lossless: true)),
        ]
        // A fixed linear congruential sequence keeps the damage reproducible.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for data in inputs {
            for _ in 0..<150 {
                var damaged = data
                for _ in 0..<(1 + next(4)) { damaged[next(damaged.count)] = UInt8(next(256)) }
                do {
                    let image = try coder.decode(damaged, options: .default)
                    #expect(image.frames.allSatisfy { $0.pixels.width == image.width && $0.pixels.height == image.height })
                } catch {
                    #expect(error is MagpieError)
                }
            }
        }
    }

    // MARK: Orientation and scaling

    @Test("EXIF orientation 6 turns the image upright and swaps its size; appliesOrientation false keeps it")
    func exifOrientationIsApplied() throws {
        let pixels = try Self.gradient(width: 6, height: 4, opaque: true)
        let simple = try coder.encode(Image(pixels: pixels), options: ImageEncodingOptions(lossless: true))
        let data = Self.withOrientation(simple, width: 6, height: 4, orientation: 6)
        let upright = try coder.decode(data, options: .default)
        #expect(upright.width == 4 && upright.height == 6)
        #expect(upright.pixels == (try ImageOrientation.right.apply(to: pixels)))
        let stored = try coder.decode(data, options: ImageDecodingOptions(appliesOrientation: false))
        #expect(stored.pixels == pixels)
    }

    @Test("targetSize decodes a smaller still image that still covers the target")
    func targetSizeDecodesSmallerButStillCoversTheTarget() throws {
        let pixels = try Self.gradient(width: 400, height: 200, opaque: true)
        let data = try coder.encode(Image(pixels: pixels), options: ImageEncodingOptions(quality: 90))
        let fit = try coder.decode(data, options: ImageDecodingOptions(targetSize: PixelSize(width: 100, height: 100)))
        #expect(fit.width == 100 && fit.height == 50)
        let fill = try coder.decode(
            data, options: ImageDecodingOptions(targetSize: PixelSize(width: 100, height: 100), contentMode: .aspectFill))
        #expect(fill.width == 200 && fill.height == 100)
        let larger = try coder.decode(data, options: ImageDecodingOptions(targetSize: PixelSize(width: 800, height: 800)))
        #expect(larger.width == 400 && larger.height == 200)
    }

    @Test("targetSize is computed in display orientation for rotated images")
    func targetSizeHonoursOrientation() throws {
        let pixels = try Self.gradient(width: 200, height: 100, opaque: true)
        let simple = try coder.encode(Image(pixels: pixels), options: ImageEncodingOptions(lossless: true))
        let data = Self.withOrientation(simple, width: 200, height: 100, orientation: 8)
        // Displayed 100x200; fitting into 50x50 needs 25x50.
        let image = try coder.decode(data, options: ImageDecodingOptions(targetSize: PixelSize(width: 50, height: 50)))
        #expect(image.width == 25 && image.height == 50)
    }

    // MARK: Concurrency

    @Test("concurrent decodes of the same data agree")
    func concurrentDecodesAgree() async throws {
        let (_, animated) = try animation()
        let lossy = try coder.encode(
            Image(pixels: try Self.gradient(width: 120, height: 80)), options: ImageEncodingOptions(quality: 80))
        let coder = self.coder
        for data in [animated, lossy] {
            let reference = try coder.decode(data, options: .default)
            let results = try await withThrowingTaskGroup(of: Image.self) { group in
                for _ in 0..<16 { group.addTask { try coder.decode(data, options: .default) } }
                return try await group.reduce(into: [Image]()) { $0.append($1) }
            }
            #expect(results.count == 16)
            #expect(results.allSatisfy { $0 == reference })
        }
    }
}

extension WebPCoderTests {
    /// libwebp's cumulative timestamp is an Int32 that overflows after ~128 frames of the
    /// longest duration; durations must come from the frames themselves. Our encoder refuses
    /// such a long animation, so the file is made short and its ANMF durations patched.
    @Test func longAnimationsKeepEveryStoredDuration() throws {
        let frames = try (0..<140).map { i -> ImageFrame in
            ImageFrame(pixels: try PixelBuffer(width: 2, height: 2, fill: RGBAColor(red: UInt8(i), green: UInt8(255 - i), blue: 7)),
                       duration: .milliseconds(100))
        }
        var data = try WebPCoder().encode(try Image(frames: frames, loopCount: 0), options: .init(lossless: true))
        var offset = 12, patched = 0
        while offset + 8 <= data.count {
            let size = Int(data[offset + 4]) | Int(data[offset + 5]) << 8 | Int(data[offset + 6]) << 16 | Int(data[offset + 7]) << 24
            if data[offset..<(offset + 4)].elementsEqual("ANMF".utf8) {
                for k in 0..<3 { data[offset + 8 + 12 + k] = 0xFF }  // 24-bit duration at payload offset 12
                patched += 1
            }
            offset += 8 + size + (size & 1)
        }
        #expect(patched == 140)
        let decoded = try WebPCoder().decode(data, options: .default)
        #expect(decoded.frames.count == 140)
        #expect(decoded.frames.allSatisfy { $0.duration == .milliseconds(0xFF_FFFF) })
    }
}
