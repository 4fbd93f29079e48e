import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// Processors are bound by the retrieval's limits (``ImageDecodingLimits``): result sides, pixels, bytes, and the
/// working memory of each step, so a text form from an untrusted caller (the CLI, `magpie serve`) cannot ask for a
/// multi-gigabyte frame or its scratch.
struct ProcessingLimitTests {
    static func isOutputTooLarge(_ error: MagpieError) -> Bool {
        if case .processingFailed(reason: .outputTooLarge) = error { return true }
        return false
    }

    func process(_ spec: String, _ image: Image, context: ImageProcessingContext = .default) throws -> Image? {
        try ImageProcessorSpec.parse(spec).process(item: .image(image), context: context)
    }

    @Test func resizeOverTheDefaultPixelLimitIsRefusedWithATypedError() throws {
        let image = Image(pixels: try TestImages.gradient(width: 9, height: 7))
        // 20,000 × 20,000 = 400 MP, over the default 100 MP per frame (and 1.6 GB: Linux would likely grant it).
        let error = try #require(throws: MagpieError.self) { try process("resize:20000x20000", image) }
        #expect(Self.isOutputTooLarge(error))
        #expect(error.description.contains("resize:20000x20000:none"))
        #expect(error.description.contains("over the limit of 100000000 pixels per frame"))
    }

    @Test func theLimitComesFromTheRetrievalsDecodingOptions() throws {
        let image = Image(pixels: try TestImages.gradient(width: 9, height: 7))
        let tight = ImageProcessingContext(decodingOptions: ImageDecodingOptions(limits: ImageDecodingLimits(maxPixelsPerFrame: 10_000)))
        #expect(try process("resize:100x100", image, context: tight)?.width == 100)
        let error = try #require(throws: MagpieError.self) { try process("resize:101x100", image, context: tight) }
        #expect(Self.isOutputTooLarge(error))
    }

    @Test func totalBytesCountEveryFrameOfAnAnimation() throws {
        let frame = try TestImages.gradient(width: 9, height: 7)
        let animation = try Image(frames: Array(repeating: ImageFrame(pixels: frame, duration: .milliseconds(50)), count: 10))
        // 100 × 100 × 4 bytes × 10 frames = 400,000 bytes: one frame fits the budget, ten do not.
        let context = ImageProcessingContext(decodingOptions: ImageDecodingOptions(limits: ImageDecodingLimits(maxTotalBytes: 300_000)))
        #expect(try process("resize:100x100", Image(pixels: frame), context: context) != nil)
        let error = try #require(throws: MagpieError.self) { try process("resize:100x100", animation, context: context) }
        #expect(Self.isOutputTooLarge(error))
        #expect(error.description.contains("10 frames"))
    }

    @Test(arguments: ["resize:1x9000000000000000000:fill", "resize:9000000000000000000x9000000000000000000:fit",
                      "round:2:size=1x9000000000000000000"])
    func anAstronomicalSizeIsATypedErrorNotAnOverflowTrap(spec: String) throws {
        let image = Image(pixels: try TestImages.gradient(width: 9, height: 7))
        let error = try #require(throws: MagpieError.self) { try process(spec, image) }
        #expect(Self.isOutputTooLarge(error))
    }

    @Test func roundIntoATargetChecksTheIntermediateCoverToo() throws {
        // A 1×1000 strip covering 1000×1000 would first be scaled to 1000×1,000,000 (1 G pixels).
        let strip = Image(pixels: try TestImages.gradient(width: 1, height: 1000))
        let error = try #require(throws: MagpieError.self) { try process("round:4:size=1000x1000", strip) }
        #expect(Self.isOutputTooLarge(error))
    }

    @Test func aResizeCountsItsScratchAgainstTheWorkingMemoryLimit() throws {
        // 1×19999 → 600×1000: the output (2.4 MB) fits any limit here, but the weight tables, the ring of float rows and
        // the row buffers come on top of it.
        let strip = Image(pixels: try TestImages.gradient(width: 1, height: 19_999))
        let size = PixelSize(width: 600, height: 1000)
        let output = size.width * size.height * 4
        let scratch = ImageResampler.scratchBytes(from: strip.pixelSize, to: size)
        #expect(scratch > 0)
        let tight = ImageProcessingContext(
            decodingOptions: ImageDecodingOptions(limits: ImageDecodingLimits(maxWorkingBytes: output + scratch - 1)))
        let error = try #require(throws: MagpieError.self) { try process("resize:600x1000", strip, context: tight) }
        guard case .processingFailed(.outputTooLarge(_, _, _, .workingBytes(let needed, _))) = error else {
            Issue.record("expected a working-memory refusal, got \(error)")
            return
        }
        #expect(needed == output + scratch)
        #expect(error.description.contains("working memory"))
        let enough = ImageProcessingContext(
            decodingOptions: ImageDecodingOptions(limits: ImageDecodingLimits(maxWorkingBytes: output + scratch)))
        #expect(try process("resize:600x1000", strip, context: enough)?.width == 600)
        // A pre-reduced source keeps the rows small: 1×100000 → 6000×10 needs 6000 × 20 of them.
        let tall = Image(pixels: try TestImages.gradient(width: 1, height: 100_000))
        #expect(try process("resize:6000x10", tall)?.width == 6000)
    }

    @Test(arguments: ["resize:1x49000000:none", "resize:49000000x1:none", "round:2:size=1x70000"])
    func aSideOverTheResultDimensionIsRefusedAtOnceWhicheverSideItIs(spec: String) throws {
        // The memory DoS: 1×49,000,000 stayed under 50 MP and took a gigabyte of weight tables before this limit.
        let image = Image(pixels: try TestImages.gradient(width: 60, height: 40))
        let before = PNGCoderTests.peakRSSKiB()
        let error = try #require(throws: MagpieError.self) { try process(spec, image) }
        guard case .processingFailed(.outputTooLarge(_, _, _, .dimension(65_535))) = error else {
            Issue.record("expected the result-dimension limit, got \(error)")
            return
        }
        #expect(error.description.contains("65535 pixels a side"))
        #expect(PNGCoderTests.peakRSSKiB() - before < 64 * 1024)
    }

    @Test func theResizeScratchEstimateCoversTheTablesItBuilds() {
        for (source, destination) in [(1500, 60_000), (60_000, 1500), (640, 256), (7, 7), (1, 5000), (5000, 1)] {
            for filter in [ResamplingFilter.lanczos3, .mitchell, .bilinear, .box, .nearest] {
                let table = ImageResampler.Contributions(source: source, destination: destination, filter: filter)
                let built = (table.first.count + table.count.count) * MemoryLayout<Int>.stride + table.weights.count * 4
                #expect(built <= ImageResampler.Contributions.bytes(source: source, destination: destination, filter: filter),
                        "\(source) → \(destination) \(filter)")
                #expect(table.stride <= ImageResampler.Contributions.maximumTaps(source: source, destination: destination, filter: filter))
            }
        }
        // A 49-million-row target's tables are what took the gigabyte: counted before they are built.
        let estimate = ImageResampler.scratchBytes(from: PixelSize(width: 2000, height: 1500), to: PixelSize(width: 1, height: 49_000_000))
        #expect(estimate > 49_000_000 * 16)
    }

    @Test func aCancelledResizeOrBlurStopsWithATypedError() throws {
        let image = Image(pixels: try TestImages.gradient(width: 300, height: 300))
        let cancelled = ImageProcessingContext(isCancelled: { true })
        for spec in ["resize:400x400", "blur:3", "round:4:size=500x500"] {
            let error = try #require(throws: MagpieError.self, "\(spec)") { try process(spec, image, context: cancelled) }
            #expect(error == .processingFailed(reason: .cancelled), "\(spec): \(error)")
        }
    }

    @Test func aBlurCountsItsFloatPlanesAgainstTheWorkingMemoryLimit() throws {
        let image = Image(pixels: try TestImages.gradient(width: 200, height: 100))
        let layout = BoxBlur.Layout(width: 200, height: 100, sigma: 3)
        let needed = 200 * 100 * 4 + layout.scratchBytes
        let tight = ImageProcessingContext(decodingOptions: ImageDecodingOptions(limits: ImageDecodingLimits(maxWorkingBytes: needed - 1)))
        let error = try #require(throws: MagpieError.self) { try process("blur:3", image, context: tight) }
        #expect(error == .processingFailed(reason: .outputTooLarge(
            processor: "blur:3", size: image.pixelSize, frames: 1, limit: .workingBytes(needed: needed, limit: needed - 1))))
        let enough = ImageProcessingContext(decodingOptions: ImageDecodingOptions(limits: ImageDecodingLimits(maxWorkingBytes: needed)))
        #expect(try process("blur:3", image, context: enough) != nil)
    }

    @Test func shrinkingAnImageAlreadyOverTheLimitsStillWorks() throws {
        let image = Image(pixels: try TestImages.gradient(width: 200, height: 100))
        let tight = ImageProcessingContext(decodingOptions: ImageDecodingOptions(limits: ImageDecodingLimits(maxPixelsPerFrame: 1_000)))
        #expect(try process("resize:20x10", image, context: tight)?.width == 20)
    }

    @Test func blurOnAThinStripPadsEachDirectionByItsOwnSide() throws {
        // One sigma cap for both directions padded the strip's one-pixel columns by 4 × 4000 rows on each side:
        // ~2 GB of scratch for a 16 KB image. Each direction is now capped by its own side.
        let strip = Image(pixels: try TestImages.gradient(width: 4000, height: 1))
        let before = PNGCoderTests.peakRSSKiB()
        let out = try #require(try process("blur:1000000", strip))
        #expect(out.width == 4000 && out.height == 1)
        #expect(PNGCoderTests.peakRSSKiB() - before < 512 * 1024)
    }

    @Test func blurScratchStaysNearSixteenBytesAPixelAtAnyRadius() throws {
        // Padding every strip of the horizontally blurred image by the vertical radius made a 1000×2000 image at
        // σ = 10⁶ need ~290 MB of float scratch (~144 bytes a pixel); only the two line buffers are padded now.
        for sigma in [1.0, 50, 1_000_000] {
            let layout = BoxBlur.Layout(width: 1000, height: 2000, sigma: sigma)
            #expect(layout.scratchBytes <= 20 * 1000 * 2000, "σ \(sigma): \(layout.scratchBytes) bytes")
        }
        // `gaussian` allocates exactly this layout. (No peak-RSS check: other suites decode large images in the same
        // process at the same time, and an ASan run quarantines freed memory.)
        let image = Image(pixels: try TestImages.gradient(width: 1000, height: 2000))
        let out = try #require(try process("blur:1000000", image))
        #expect(out.width == 1000 && out.height == 2000)
    }

    @Test func fillingSaturatesInsteadOfOverflowing() {
        let huge = PixelSize(width: 9, height: 7).filling(PixelSize(width: 1, height: 9_000_000_000_000_000_000))
        #expect(huge.width == 1 << 62)
    }
}
