import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// JXLCoder: fixtures are made here by encoding, then decoded back; corpus files where they exist.
@Suite("JPEG XL coder")
struct JXLCoderTests {
    let coder = JXLCoder()

    static func lossless() -> ImageEncodingOptions {
        var options = ImageEncodingOptions.default
        options.lossless = true
        options.speed = 8  // effort 2: fast, and lossless is exact at every effort
        return options
    }

    static func quality(_ quality: Int) -> ImageEncodingOptions {
        var options = ImageEncodingOptions(quality: quality)
        options.speed = 7
        return options
    }

    /// A photo-like image: smooth gradients with mild texture (no hard edges), so lossy sizes follow quality.
    static func photo(width: Int = 64, height: Int = 48, seed: Int = 0) throws -> PixelBuffer {
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let p = (y * width + x) * 4
                rgba[p] = UInt8((x * 3 + seed * 30) % 256)
                rgba[p + 1] = UInt8((y * 4 + (x * y) % 5 * 3) % 256)
                rgba[p + 2] = UInt8(((x + y) * 2 + seed * 50) % 256)
            }
        }
        return try PixelBuffer(width: width, height: height, rgba: rgba)
    }

    // MARK: Round trips

    @Test("lossless round trip is exact, including colour under transparent pixels")
    func losslessExact() throws {
        let source = try WebPCoderTests.gradient(width: 37, height: 23)
        let data = try coder.encode(Image(pixels: source), options: Self.lossless())
        #expect(ImageFormat(sniffing: data) == .jxl)
        let decoded = try coder.decode(data, options: .default)
        #expect(decoded.pixels == source)
        #expect(decoded.format == .jxl && decoded.sourceInfo?.hasAlpha == true && decoded.colorProfile == nil)
    }

    @Test("lossy stays close to the source and lower quality is smaller")
    func lossyQuality() throws {
        let source = try Self.photo()
        let high = try coder.encode(Image(pixels: source), options: Self.quality(95))
        let low = try coder.encode(Image(pixels: source), options: Self.quality(20))
        #expect(low.count < high.count)
        let decoded = try coder.decode(high, options: .default)
        let worst = zip(PixelDigest.grid8(decoded.pixels), PixelDigest.grid8(source)).map { abs($0 - $1) }.max() ?? 0
        #expect(worst <= 8)  // XYB at distance 0.55 on 8x6-pixel cells of a textured image
        #expect(decoded.sourceInfo?.hasAlpha == false && decoded.pixels.isOpaque)
        #expect(throws: MagpieError.self) { try coder.encode(Image(pixels: source), options: Self.quality(0)) }
    }

    @Test("quality maps to cjxl's distances")
    func distances() {
        #expect(JXLCoder.distance(forQuality: 90) == Float(0.1 + 10 * 0.09))
        #expect(JXLCoder.distance(forQuality: 100) == Float(0.1))
        #expect(JXLCoder.distance(forQuality: 1) == 25)
        #expect(JXLCoder.distance(forQuality: 20) > JXLCoder.distance(forQuality: 30))
    }

    @Test("an animation round-trips frames, durations and loop count; onlyFirstFrame decodes one")
    func animation() throws {
        let durations: [Duration] = [.milliseconds(100), .milliseconds(250), .milliseconds(40)]
        let frames = try durations.enumerated().map { index, duration in
            ImageFrame(pixels: try Self.photo(width: 24, height: 16, seed: index), duration: duration)
        }
        let source = try Image(frames: frames, loopCount: 3)
        let data = try coder.encode(source, options: Self.lossless())
        let decoded = try coder.decode(data, options: .default)
        #expect(decoded.frames.map(\.duration) == durations)
        #expect(decoded.frames.map(\.pixels) == frames.map(\.pixels))
        #expect(decoded.loopCount == 3)
        var first = ImageDecodingOptions.default
        first.onlyFirstFrame = true
        #expect(try coder.decode(data, options: first).frames.count == 1)
        var limited = ImageDecodingOptions.default
        limited.limits.maxFrameCount = 2
        let error = #expect(throws: MagpieError.self) { try coder.decode(data, options: limited) }
        guard case .decodingFailed(.tooLarge) = error else { Issue.record("\(String(describing: error))"); return }
        let forever = try coder.decode(coder.encode(Image(frames: frames, loopCount: 0), options: Self.lossless()), options: .default)
        #expect(forever.loopCount == 0)
        #expect(try coder.header(of: data) == ImageHeader(format: .jxl, width: 24, height: 16, frameCount: nil))
    }

    // MARK: Colour and metadata

    @Test("a Display P3 profile is embedded and comes back; sRGB comes back as no profile")
    func iccRoundTrip() throws {
        var image = Image(pixels: try Self.photo())
        image.colorProfile = ColorProfile(cicp: CICP(colorPrimaries: 12, transferCharacteristics: 13, matrixCoefficients: 0, fullRange: true))
        let decoded = try coder.decode(coder.encode(image, options: Self.lossless()), options: .default)
        let profile = try #require(decoded.colorProfile)
        #expect(profile.iccData != nil && !profile.isSRGB && profile.colorModel == .rgb)
        #expect(decoded.pixels == image.pixels)
        var options = ImageDecodingOptions.default
        options.colorSpace = .sRGB
        let data = try coder.encode(image, options: Self.lossless())
        let converted = try ImageCoderRegistry.shared.decode(data, options: options)
        #expect(converted.colorProfile == nil && converted.pixels != image.pixels)
    }

    @Test("EXIF and XMP are written as boxes only with metadata .keep")
    func metadataBoxes() throws {
        var image = Image(pixels: try Self.photo(width: 16, height: 16))
        let exif = Data(WebPCoderTests.exifPayload(orientation: 1))
        let xmp = Data("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>".utf8)
        image.metadata = ImageMetadata(exif: exif, xmp: xmp)
        let plain = try coder.decode(coder.encode(image, options: Self.lossless()), options: .default)
        #expect(plain.metadata == .none)
        var keep = Self.lossless()
        keep.metadata = .keep
        let kept = try coder.decode(coder.encode(image, options: keep), options: .default)
        #expect(kept.metadata.exif == exif && kept.metadata.xmp == xmp)
        #expect(kept.pixels == image.pixels)
    }

    // MARK: Errors and limits

    @Test("a truncated file is truncatedData, garbage after the signature is corruptData")
    func truncatedAndCorrupt() throws {
        let data = try coder.encode(Image(pixels: try Self.photo()), options: Self.quality(80))
        let error = #expect(throws: MagpieError.self) { try coder.decode(data.prefix(data.count * 2 / 3), options: .default) }
        guard case .decodingFailed(.truncatedData) = error else { Issue.record("\(String(describing: error))"); return }
        let junk = Data([0xFF, 0x0A]) + Data(repeating: 0xA5, count: 64)
        #expect(throws: MagpieError.self) { try coder.decode(junk, options: .default) }
        #expect(throws: MagpieError.self) { try coder.decode(Data([0xFF]), options: .default) }
    }

    @Test("the SizeHeader is checked against the pixel limit before decoding")
    func pixelLimit() throws {
        let data = try coder.encode(Image(pixels: try Self.photo()), options: Self.quality(80))
        var options = ImageDecodingOptions.default
        options.limits.maxPixelsPerFrame = 64 * 48 - 1
        let error = #expect(throws: MagpieError.self) { try coder.decode(data, options: options) }
        guard case .decodingFailed(.tooLarge) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(try ImageCoderRegistry.shared.header(of: data) == ImageHeader(format: .jxl, width: 64, height: 48, frameCount: 1))
    }

    @Test("speed is accepted as effort from fastest to slowest")
    func speed() throws {
        let source = Image(pixels: try Self.photo(width: 16, height: 16))
        for speed in [0, 10] {
            var options = Self.lossless()
            options.speed = speed
            #expect(try coder.decode(coder.encode(source, options: options), options: .default).pixels == source.pixels)
        }
    }

    // MARK: Corpus

    @Test("the codestream orientation is applied unless turned off", .enabled(if: Corpus.directory != nil))
    func orientation() throws {
        let url = Corpus.directory!.appendingPathComponent("jxl/kif-orientation6.jxl")
        let data = try Data(contentsOf: url)
        let upright = try coder.decode(data, options: .default)
        #expect(upright.width == 480 && upright.height == 160)
        var keep = ImageDecodingOptions.default
        keep.appliesOrientation = false
        let stored = try coder.decode(data, options: keep)
        #expect(stored.width == 160 && stored.height == 480)
        #expect(try ImageOrientation.right.apply(to: stored.pixels) == upright.pixels)
    }

    @Test("corrupt, truncated and bomb corpus files fail with typed errors", .enabled(if: Corpus.directory != nil))
    func corpusErrors() throws {
        for name in ["jxl-corrupt/recompressed-truncated.jxl", "jxl-corrupt/tower-truncated.jxl", "bombs-formats/solid-12000x12000.jxl"] {
            let data = try Data(contentsOf: Corpus.directory!.appendingPathComponent(name))
            #expect(throws: MagpieError.self, "\(name)") { try coder.decode(data, options: .default) }
        }
    }
}
