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

    /// The two passes stream through a ring of rows; this is what they computed before, with the whole
    /// intermediate image in memory. Same float operations in the same order (a horizontal sum adds its even and
    /// its odd taps apart, then the two), so the bytes must be equal.
    static func referenceConvolve(_ pixels: PixelBuffer, to size: PixelSize, filter: ResamplingFilter) throws -> PixelBuffer {
        let columns = ImageResampler.Contributions(source: pixels.width, destination: size.width, filter: filter)
        let rows = ImageResampler.Contributions(source: pixels.height, destination: size.height, filter: filter)
        let opaque = pixels.isOpaque
        func value(_ x: Int, _ y: Int) -> SIMD4<Float> {
            let p = pixels[x, y]
            let v = SIMD4<Float>(Float(p.red), Float(p.green), Float(p.blue), Float(p.alpha))
            return opaque ? v : SIMD4(v.x * (v.w / 255), v.y * (v.w / 255), v.z * (v.w / 255), v.w)
        }
        var mid = [SIMD4<Float>](repeating: .zero, count: size.width * pixels.height)
        for y in 0..<pixels.height {
            for x in 0..<size.width {
                var sums = [SIMD4<Float>.zero, .zero]
                for k in 0..<columns.count[x] {
                    sums[k % 2] += value(columns.first[x] + k, y) * columns.weights[x * columns.stride + k]
                }
                mid[y * size.width + x] = sums[0] + sums[1]
            }
        }
        var bytes = [UInt8](repeating: 0, count: size.width * size.height * 4)
        for y in 0..<size.height {
            var acc = [SIMD4<Float>](repeating: .zero, count: size.width)
            for k in 0..<rows.count[y] {
                let w = rows.weights[y * rows.stride + k]
                for x in 0..<size.width { acc[x] += mid[(rows.first[y] + k) * size.width + x] * w }
            }
            for x in 0..<size.width {
                let v = acc[x], p = (y * size.width + x) * 4
                if opaque {
                    let c = (v + 0.5).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: 255))
                    bytes[p] = UInt8(c.x); bytes[p + 1] = UInt8(c.y); bytes[p + 2] = UInt8(c.z); bytes[p + 3] = 255
                } else {
                    let alpha = min(max(v.w, 0), 255)
                    guard alpha >= 0.5 else { continue }
                    let colour = SIMD4(v.x, v.y, v.z, 0).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: alpha))
                    let scaled = colour * (255 / alpha) + 0.5
                    bytes[p] = UInt8(min(scaled.x, 255)); bytes[p + 1] = UInt8(min(scaled.y, 255))
                    bytes[p + 2] = UInt8(min(scaled.z, 255)); bytes[p + 3] = UInt8(alpha + 0.5)
                }
            }
        }
        return try PixelBuffer(width: size.width, height: size.height, rgba: bytes)
    }

    @Test(arguments: [ResamplingFilter.lanczos3, .bilinear, .nearest])
    func streamingThroughARingOfRowsGivesTheSameBytesAsTheWholeIntermediateImage(filter: ResamplingFilter) throws {
        let opaque = try TestImages.gradient(width: 97, height: 61)
        let translucent = try TestImages.gradient(width: 97, height: 61, alpha: true)
        // Shrinks under 2× (no box pre-reduction), enlargements, and one axis each way.
        let sizes = [PixelSize(width: 60, height: 40), PixelSize(width: 200, height: 150), PixelSize(width: 97, height: 33),
                     PixelSize(width: 50, height: 120), PixelSize(width: 49, height: 31), PixelSize(width: 96, height: 60)]
        for source in [opaque, translucent] {
            for size in sizes {
                let streamed = try ImageResampler.resize(source, to: size, filter: filter)
                #expect(streamed == (try Self.referenceConvolve(source, to: size, filter: filter)), "\(filter) \(size)")
            }
        }
    }

    @Test func storingRoundsHalfUpAndClampsExactlyAsTheTrappingConversionDid() {
        // Every 1/256 from below 0 to past 255, and the floats either side of each half-way point, where rounding
        // through 2^23 (ties to even) must be corrected to round half up.
        var values: [Float] = stride(from: Float(-3), through: 259, by: 1.0 / 256).map { $0 }
        for k in -2...257 {
            let half = Float(k) + 0.5
            values += [half.nextDown, half, half.nextUp, Float(k).nextDown, Float(k).nextUp]
        }
        for value in values {
            let expected = UInt8(min(max(value + 0.5, 0), 255))
            let stored = ImageResampler.store(SIMD4(value, 0, 255, value))
            #expect(stored == SIMD4(expected, 0, 255, expected), "\(value)")
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
