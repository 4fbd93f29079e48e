import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct ImageResamplerTests {
    @Test(arguments: ResamplingFilter.allCases)
    func uniformColourStaysUniform(filter: ResamplingFilter) throws {
        let colour = RGBAColor(red: 12, green: 200, blue: 90, alpha: 160)
        let source = try PixelBuffer(width: 101, height: 77, fill: colour)
        for size in [PixelSize(width: 13, height: 9), PixelSize(width: 250, height: 160)] {
            let out = try ImageResampler.resize(source, to: size, filter: filter)
            #expect(out.width == size.width && out.height == size.height)
            for (x, y) in [(0, 0), (size.width / 2, size.height / 2), (size.width - 1, size.height - 1)] {
                let p = out[x, y]
                #expect(abs(Int(p.red) - 12) <= 1 && abs(Int(p.green) - 200) <= 1 && abs(Int(p.alpha) - 160) <= 1, "\(filter) \(p)")
            }
        }
    }

    /// Found by `scripts/fuzz --target spec`: the weight table was sized by the target before the
    /// output was allocated, so an absurd target crashed the process instead of throwing.
    @Test func resizeToAnUnallocatableSizeIsATypedErrorNotACrash() throws {
        let image = try Image(width: 9, height: 7, rgba: [UInt8](repeating: 200, count: 9 * 7 * 4))
        for size in [PixelSize(width: 6_111_111_111_110, height: 4622), PixelSize(width: 4622, height: 6_111_111_111_110),
                     PixelSize(width: 1 << 40, height: 1 << 40),
                     // Past Int.max / 2 the box pre-reduction's arithmetic overflowed (a trap; found in review).
                     PixelSize(width: .max, height: 1), PixelSize(width: 1, height: .max)] {
            #expect(throws: MagpieError.self) { _ = try image.resized(to: size) }
        }
        let chain = try ImageProcessorSpec.parse("resize:6111111111110x4622:none|round:8")
        #expect(throws: MagpieError.self) { _ = try chain.process(item: .image(image), context: .default) }
    }

    @Test func transparentNeighboursDoNotDarkenEdges() throws {
        // Left half opaque white, right half fully transparent *black*: straight-alpha
        // averaging would give grey edge pixels; premultiplied resampling keeps them white.
        var source = try PixelBuffer(width: 64, height: 8, fill: .clear)
        for y in 0..<8 { for x in 0..<32 { source[x, y] = .white } }
        let out = try ImageResampler.resize(source, to: PixelSize(width: 16, height: 2))
        for x in 0..<16 {
            let p = out[x, 1]
            if p.alpha > 8 { #expect(p.red >= 250 && p.green >= 250 && p.blue >= 250, "x=\(x) \(p)") }
        }
        #expect(out[7, 1].alpha > 200 && out[15, 1].alpha < 10)
    }

    @Test func downscaledGradientStaysMonotonic() throws {
        let source = try TestImages.gradient(width: 1000, height: 10)
        let out = try ImageResampler.resize(source, to: PixelSize(width: 50, height: 1))
        let reds = (0..<50).map { Int(out[$0, 0].red) }
        #expect(zip(reds, reds.dropFirst()).allSatisfy { $0 <= $1 + 1 })
        #expect(reds.first! < 10 && reds.last! > 245)
    }

    @Test func fitKeepsAspectRatioAndNeverUpscalesByDefault() throws {
        let image = Image(pixels: try TestImages.gradient(width: 400, height: 100))
        #expect(try image.resized(toFit: PixelSize(width: 100, height: 100)).pixelSize == PixelSize(width: 100, height: 25))
        #expect(try image.resized(toFit: PixelSize(width: 800, height: 800)).pixelSize == PixelSize(width: 400, height: 100))
        #expect(try image.resized(toFit: PixelSize(width: 800, height: 800), upscale: true).pixelSize == PixelSize(width: 800, height: 200))
        #expect(throws: MagpieError.self) { try image.resized(toFit: PixelSize(width: 0, height: 10)) }
    }

    @Test func everyFrameOfAnAnimationIsResized() throws {
        let frame = ImageFrame(pixels: try TestImages.gradient(width: 40, height: 40), duration: .milliseconds(30))
        let image = try Image(frames: [frame, frame], loopCount: 0)
        let small = try image.resized(to: PixelSize(width: 10, height: 10))
        #expect(small.frames.count == 2 && small.frames.allSatisfy { $0.pixels.width == 10 && $0.duration == .milliseconds(30) })
        #expect(small.loopCount == 0)
    }
}
