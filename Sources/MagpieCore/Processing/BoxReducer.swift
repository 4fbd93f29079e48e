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
            let words = raw.bindMemory(to: UInt32.self)
            output.withUnsafeMutableBytes { outRaw in
                let dst = outRaw.bindMemory(to: UInt8.self)
                // One accumulator row of (Σ r·a, Σ g·a, Σ b·a, Σ a) per output column;
                // plain UInt32 lanes, which the optimiser keeps in registers.
                var sums = [UInt32](repeating: 0, count: ow * 4)
                sums.withUnsafeMutableBufferPointer { sums in
                    for oy in 0..<oh {
                        let y0 = oy * fy, y1 = min(height, y0 + fy)
                        sums.update(repeating: 0)
                        for y in y0..<y1 {
                            let row = y * width
                            for ox in 0..<ow {
                                var p = row + ox * fx
                                let end = row + min(width, (ox + 1) * fx)
                                var r: UInt32 = 0, g: UInt32 = 0, b: UInt32 = 0, a: UInt32 = 0
                                while p < end {
                                    // One 32-bit load per pixel: R, G, B, A from low byte up.
                                    let pixel = UInt32(littleEndian: words[p])
                                    let alpha = pixel >> 24
                                    r &+= (pixel & 0xFF) &* alpha
                                    g &+= (pixel >> 8 & 0xFF) &* alpha
                                    b &+= (pixel >> 16 & 0xFF) &* alpha
                                    a &+= alpha
                                    p += 1
                                }
                                sums[ox * 4] &+= r
                                sums[ox * 4 + 1] &+= g
                                sums[ox * 4 + 2] &+= b
                                sums[ox * 4 + 3] &+= a
                            }
                        }
                        let rowBase = oy * ow * 4
                        for ox in 0..<ow {
                            let x0 = ox * fx, x1 = min(width, x0 + fx)
                            let count = UInt32((x1 - x0) * (y1 - y0))
                            let d = rowBase + ox * 4, s = ox * 4
                            let weight = sums[s + 3]
                            if weight == 0 {
                                dst[d] = 0; dst[d + 1] = 0; dst[d + 2] = 0; dst[d + 3] = 0
                                continue
                            }
                            let half = weight / 2
                            dst[d] = UInt8(min(255, (sums[s] + half) / weight))
                            dst[d + 1] = UInt8(min(255, (sums[s + 1] + half) / weight))
                            dst[d + 2] = UInt8(min(255, (sums[s + 2] + half) / weight))
                            dst[d + 3] = UInt8((weight + count / 2) / count)
                        }
                    }
                }
            }
        }
        return output
    }
}
