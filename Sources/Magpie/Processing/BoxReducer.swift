#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Integer-factor area reduction, the cheap first step of a large downscale.
///
/// Shrinking 5120 px to 256 px with Lanczos alone means ~120 taps per output pixel;
/// averaging blocks of whole pixels first and leaving a factor of at least
/// `ImageResampler.reducingGap` to the final filter costs one read per source pixel
/// and looks the same. Averages are alpha-weighted, so no halos either.
enum BoxReducer {
    static func reduce(_ pixels: PixelBuffer, factorX fx: Int, factorY fy: Int) throws -> PixelBuffer {
        let ow = (pixels.width + fx - 1) / fx
        let oh = (pixels.height + fy - 1) / fy
        var output = try PixelBuffer.uninitialized(width: ow, height: oh)
        let width = pixels.width, height = pixels.height
        pixels.withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt8.self)
            output.withUnsafeMutableBytes { outRaw in
                let dst = outRaw.bindMemory(to: UInt8.self)
                // One accumulator row of (Σ r·a, Σ g·a, Σ b·a, Σ a) per output column.
                var sums = [SIMD4<UInt32>](repeating: .zero, count: ow)
                for oy in 0..<oh {
                    let y0 = oy * fy, y1 = min(height, y0 + fy)
                    for i in 0..<ow { sums[i] = .zero }
                    for y in y0..<y1 {
                        var p = y * width * 4
                        for x in 0..<width {
                            let a = UInt32(src[p + 3])
                            sums[x / fx] &+= SIMD4(UInt32(src[p]) &* a, UInt32(src[p + 1]) &* a, UInt32(src[p + 2]) &* a, a)
                            p += 4
                        }
                    }
                    let rowBase = oy * ow * 4
                    for ox in 0..<ow {
                        let x0 = ox * fx, x1 = min(width, x0 + fx)
                        let count = UInt32((x1 - x0) * (y1 - y0))
                        let s = sums[ox]
                        let d = rowBase + ox * 4
                        if s.w == 0 {
                            dst[d] = 0; dst[d + 1] = 0; dst[d + 2] = 0; dst[d + 3] = 0
                            continue
                        }
                        let half = s.w / 2
                        dst[d] = UInt8(min(255, (s.x + half) / s.w))
                        dst[d + 1] = UInt8(min(255, (s.y + half) / s.w))
                        dst[d + 2] = UInt8(min(255, (s.z + half) / s.w))
                        dst[d + 3] = UInt8((s.w + count / 2) / count)
                    }
                }
            }
        }
        return output
    }
}
