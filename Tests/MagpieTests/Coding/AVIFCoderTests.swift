import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// AVIFCoder: corpus files for decoding (skipped without the corpus), our own encodes for round trips.
@Suite("AVIF coder")
struct AVIFCoderTests {
    let coder = AVIFCoder()

    static func corpus(_ path: String) throws -> Data {
        try Data(contentsOf: Corpus.directory!.appendingPathComponent(path))
    }

    /// A TIFF-structured EXIF payload holding only IFD0's orientation tag.
    static func exifPayload(orientation: Int) -> Data {
        Data(WebPCoderTests.exifPayload(orientation: orientation))
    }

    static func limited(pixels: Int = 100_000_000, frames: Int = 10_000) -> ImageDecodingOptions {
        var options = ImageDecodingOptions.default
        options.limits = ImageDecodingLimits(maxPixelsPerFrame: pixels, maxFrameCount: frames)
        return options
    }

    // MARK: Decoding (corpus)

    @Test("8-bit AVIF without pixi decodes (strict checks off) and reports its nclx code points and bit depth",
          .enabled(if: Corpus.directory != nil))
    func decodesEightBitWithoutPixi() throws {
        let image = try coder.decode(Self.corpus("avif/hopper-missing-pixi.avif"), options: .default)
        #expect(image.format == .avif)
        #expect(image.width == 128 && image.height == 128 && image.frames.count == 1)
        #expect(image.loopCount == nil)
        #expect(image.sourceInfo?.bitDepth == 8)
        #expect(image.sourceInfo?.hasAlpha == false)
        let cicp = try #require(image.colorProfile?.cicp)
        #expect(cicp == CICP(colorPrimaries: 1, transferCharacteristics: 13, matrixCoefficients: 6, fullRange: true))
        #expect(image.colorProfile?.iccData == nil)
    }

    @Test("10-bit AVIF decodes to 8 bits, reports depth 10 and carries its EXIF and XMP",
          .enabled(if: Corpus.directory != nil))
    func decodesTenBitWithMetadata() throws {
        let image = try coder.decode(Self.corpus("avif/tower-10bit-444.avif"), options: .default)
        #expect(image.width == 512 && image.height == 512)
        #expect(image.sourceInfo?.bitDepth == 10)
        let exif = try #require(image.metadata.exif)
        #expect(exif.starts(with: Array("MM\0*".utf8)) || exif.starts(with: Array("II*\0".utf8)))
        let xmp = try #require(image.metadata.xmp)
        #expect(String(decoding: xmp, as: UTF8.self).contains("xmpmeta"))
    }

    @Test("alpha is decoded straight and reported", .enabled(if: Corpus.directory != nil))
    func decodesAlpha() throws {
        let image = try coder.decode(Self.corpus("avif/kif-bwa.avif"), options: .default)
        #expect(image.sourceInfo?.hasAlpha == true)
        let alphas = Set(image.pixels.rgbaBytes.enumerated().filter { $0.offset % 4 == 3 }.map(\.element))
        #expect(alphas.contains(0) && alphas.count > 2)
    }

    @Test("irot and imir are applied: every rotated or mirrored variant decodes to the unrotated pixels",
          .enabled(if: Corpus.directory != nil))
    func appliesRotationAndMirror() throws {
        let reference = try coder.decode(Self.corpus("avif/kif-unrotated.avif"), options: .default)
        let variants = [
            "kif-rotated090", "kif-rotated090_top-to-bottom", "kif-rotated180_left-to-right", "kif-rotated270",
            "kif-rotated270_left-to-right", "kif-rotated270_top-to-bottom", "kif-unrotated_left-to-right",
            "kif-unrotated_top-to-bottom",
        ]
        for name in variants {
            let image = try coder.decode(Self.corpus("avif/\(name).avif"), options: .default)
            #expect(image.pixels == reference.pixels, "\(name)")
        }
    }

    @Test("clap crops before irot turns and imir flips", .enabled(if: Corpus.directory != nil))
    func cropsBeforeRotating() throws {
        let cropped = try coder.decode(Self.corpus("avif/tower-clap.avif"), options: .default)
        #expect(cropped.width == 384 && cropped.height == 320)
        let turned = try coder.decode(Self.corpus("avif/tower-clap-irot1-imir1.avif"), options: .default)
        #expect(turned.width == 320 && turned.height == 384)
        // irot 1 turns anticlockwise, then imir 1 swaps left and right: (x, y) lands on (h-1-y, w-1-x).
        let a = cropped.pixels, b = turned.pixels
        var worst = 0
        for (x, y) in [(0, 0), (100, 50), (383, 319), (200, 10), (7, 300)] {
            let p = a.rgbaBytes[(y * a.width + x) * 4]
            let q = b.rgbaBytes[((a.width - 1 - x) * b.width + (a.height - 1 - y)) * 4]
            worst = max(worst, abs(Int(p) - Int(q)))
        }
        #expect(worst <= 3)
    }

    @Test("an image sequence decodes every frame with its duration and loop count 0; onlyFirstFrame decodes one",
          .enabled(if: Corpus.directory != nil))
    func decodesSequence() throws {
        let data = try Self.corpus("avif/chi-anim.avifs")
        let image = try coder.decode(data, options: .default)
        #expect(image.frames.count == 6)
        #expect(image.frames.map(\.duration) == [100, 100, 250, 250, 500, 500].map { Duration.milliseconds($0) })
        #expect(image.loopCount == 0)
        var first = ImageDecodingOptions.default
        first.onlyFirstFrame = true
        let still = try coder.decode(data, options: first)
        #expect(still.frames.count == 1)
        #expect(still.pixels == image.pixels)
        let header = try ImageCoderRegistry.shared.header(of: data)
        #expect(header == ImageHeader(format: .avif, width: 320, height: 240, frameCount: 6))
    }

    // MARK: Errors and limits

    @Test("a sequence over maxFrameCount is refused as too large", .enabled(if: Corpus.directory != nil))
    func refusesTooManyFrames() throws {
        let data = try Self.corpus("avif/chi-anim.avifs")
        #expect(TestImages.decodingReason { try coder.decode(data, options: Self.limited(frames: 5)) }?.isTooLarge == true)
    }

    @Test("a small maxPixelsPerFrame refuses a normal file with tooLarge before decoding",
          .enabled(if: Corpus.directory != nil))
    func refusesOverPixelLimit() throws {
        let data = try Self.corpus("avif/tower-lossless.avif")
        let reason = TestImages.decodingReason { try coder.decode(data, options: Self.limited(pixels: 300 * 200 - 1)) }
        #expect(reason?.isTooLarge == true)
        #expect(try coder.decode(data, options: Self.limited(pixels: 300 * 200)).width == 300)
    }

    @Test("a grid declaring 65535x65535 is too large, and its header still tells the size",
          .enabled(if: Corpus.directory != nil))
    func bombIsTooLarge() throws {
        let data = try Self.corpus("bombs-formats/grid-65536x65536.avif")
        #expect(TestImages.decodingReason { try coder.decode(data, options: .default) }?.isTooLarge == true)
        let header = try ImageCoderRegistry.shared.header(of: data)
        #expect(header.width == 65535 && header.height == 65535)
    }

    @Test("truncated and corrupt files throw typed errors", .enabled(if: Corpus.directory != nil))
    func corruptFilesThrow() throws {
        let half = try Self.corpus("avif-corrupt/tower-truncated-half.avif")
        #expect(TestImages.decodingReason { try coder.decode(half, options: .default) }?.isTruncated == true)
        let sequence = try Self.corpus("avif-corrupt/star-truncated.avifs")
        #expect(TestImages.decodingReason { try coder.decode(sequence, options: .default) } != nil)
        var garbage = try Self.corpus("avif/kif-rgb.avif")
        garbage.replaceSubrange(40..<min(garbage.count, 400), with: [UInt8](repeating: 0xA5, count: 360))
        #expect(TestImages.decodingReason { try coder.decode(garbage, options: .default) } != nil)
        #expect(TestImages.decodingReason { try coder.decode(Data(), options: .default) } == .emptyData)
    }

    // MARK: Encoding

    @Test("lossy round trip stays close to the original, and higher quality makes larger files")
    func lossyRoundTrip() throws {
        let pixels = try TestImages.gradient(width: 96, height: 64)
        let image = Image(pixels: pixels)
        let high = try coder.encode(image, options: ImageEncodingOptions(quality: 90))
        let low = try coder.encode(image, options: ImageEncodingOptions(quality: 20))
        #expect(ImageFormat(sniffing: high) == .avif)
        #expect(low.count < high.count)
        let decoded = try coder.decode(high, options: .default)
        #expect(decoded.width == 96 && decoded.height == 64 && decoded.frames.count == 1)
        #expect(TestImages.meanError(decoded.pixels, pixels) < 3)
        #expect(decoded.sourceInfo?.hasAlpha == false)
    }

    @Test("lossless round trip is pixel-exact, alpha included")
    func losslessRoundTrip() throws {
        let pixels = try TestImages.gradient(width: 45, height: 31, alpha: true)
        let data = try coder.encode(Image(pixels: pixels), options: ImageEncodingOptions(lossless: true))
        let decoded = try coder.decode(data, options: .default)
        #expect(decoded.pixels == pixels)
        #expect(decoded.sourceInfo?.hasAlpha == true)
    }

    @Test("an animation round-trips as a sequence with its frames and durations; onlyFirstFrame writes a still")
    func animatedRoundTrip() throws {
        let durations: [Duration] = [.milliseconds(100), .milliseconds(250), .milliseconds(40)]
        let frames = try durations.enumerated().map { index, duration in
            ImageFrame(pixels: try WebPCoderTests.gradient(width: 40, height: 30, seed: index + 1, opaque: true),
                       duration: duration)
        }
        let image = try Image(frames: frames, loopCount: 0)
        let data = try coder.encode(image, options: ImageEncodingOptions(lossless: true))
        let decoded = try coder.decode(data, options: .default)
        #expect(decoded.frames.count == 3)
        #expect(decoded.frames.map(\.duration) == durations)
        #expect(decoded.loopCount == 0)
        for (a, b) in zip(decoded.frames, frames) { #expect(a.pixels == b.pixels) }
        let still = try coder.decode(
            coder.encode(image, options: ImageEncodingOptions(lossless: true, onlyFirstFrame: true)), options: .default)
        #expect(still.frames.count == 1 && still.loopCount == nil)
    }

    @Test("an ICC profile round-trips, and a CICP-only profile is written as nclx",
          .enabled(if: Corpus.directory != nil))
    func colourProfilesRoundTrip() throws {
        let p3 = try coder.decode(Self.corpus("icc/tower-displayp3-icc.avif"), options: .default)
        let icc = try #require(p3.colorProfile?.iccData)
        #expect(p3.colorProfile?.name == "Display P3")
        var image = Image(pixels: try TestImages.gradient(width: 16, height: 16))
        image.colorProfile = ColorProfile(iccData: icc)
        let withICC = try coder.decode(coder.encode(image, options: .default), options: .default)
        #expect(withICC.colorProfile?.iccData == icc)

        let cicp = CICP(colorPrimaries: 12, transferCharacteristics: 13, matrixCoefficients: 0, fullRange: true)
        image.colorProfile = ColorProfile(cicp: cicp)
        let withCICP = try coder.decode(coder.encode(image, options: .default), options: .default)
        #expect(withCICP.colorProfile?.iccData == nil)
        #expect(withCICP.colorProfile?.cicp?.colorPrimaries == 12)
        #expect(withCICP.colorProfile?.cicp?.transferCharacteristics == 13)
        #expect(withCICP.colorProfile?.name == "Display P3")
    }

    @Test("EXIF (its orientation reset to 1: the pixels are upright) and XMP are written only with metadata .keep, and the image is not turned")
    func metadataOnlyWithKeep() throws {
        var image = Image(pixels: try TestImages.gradient(width: 20, height: 10))
        let xmp = Data("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>".utf8)
        image.metadata = ImageMetadata(exif: Self.exifPayload(orientation: 6), xmp: xmp)
        let plain = try coder.decode(coder.encode(image, options: .default), options: .default)
        #expect(plain.metadata == .none)
        var keep = ImageEncodingOptions()
        keep.metadata = .keep
        let kept = try coder.decode(coder.encode(image, options: keep), options: .default)
        #expect(kept.metadata.exif == Self.exifPayload(orientation: 1))
        #expect(kept.metadata.xmp == xmp)
        #expect(kept.width == 20 && kept.height == 10)
    }

    @Test("speed outside 0...10 and quality outside 1...100 are invalid options")
    func invalidOptions() throws {
        let image = Image(pixels: try TestImages.gradient(width: 8, height: 8))
        var options = ImageEncodingOptions()
        options.speed = 11
        #expect(throws: MagpieError.self) { try coder.encode(image, options: options) }
        #expect(throws: MagpieError.self) { try coder.encode(image, options: ImageEncodingOptions(quality: 0)) }
        options.speed = 10
        #expect(ImageFormat(sniffing: try coder.encode(image, options: options)) == .avif)
    }
}
