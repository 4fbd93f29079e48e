#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Where a crop of a given size keeps the most interesting part of an image: the weighted centre of a detector's
/// regions when it finds any, else the peak of an attention map in the manner of libvips's `smartcrop` (attention),
/// which imgproxy's `g:sm` runs: on the image shrunk to about 32 × 32, lightness edges (a Laplacian), skin tones (the
/// distance of the normalised XYZ colour from a typical skin's) and colourfulness (CIELAB a*) where lightness is above
/// 5, summed, blurred at a scale proportional to the crop, and the crop centred on the maximum, kept inside the image.
public enum SmartCropping {
    /// Where a smart crop centres, and why.
    public struct Focus: Sendable, Equatable {
        /// Across, as a fraction of the width.
        public var x: Double
        /// Down, as a fraction of the height.
        public var y: Double
        /// The detector's regions it is the weighted centre of; empty when attention (or the centre) decided.
        public var regions: [FocalRegion]
    }

    /// The focus point for a crop of `crop` out of `image`, as fractions of its width and height.
    public static func focusPoint(in image: PixelBuffer, crop: PixelSize, detector: (any FocalPointDetecting)? = nil) -> (x: Double, y: Double) {
        let focus = focus(in: image, crop: crop, detector: detector)
        return (focus.x, focus.y)
    }

    /// The focus for a crop of `crop` out of `image`: the weighted centre of the detector's regions when it finds any
    /// (a throw counts as none), else attention's peak.
    public static func focus(in image: PixelBuffer, crop: PixelSize, detector: (any FocalPointDetecting)? = nil) -> Focus {
        if let detector, let regions = try? detector.focalRegions(in: Image(pixels: image)), !regions.isEmpty {
            let total = regions.reduce(0) { $0 + max($1.weight, 0) }
            if total > 0 {
                let x = regions.reduce(0) { $0 + ($1.x + $1.width / 2) * max($1.weight, 0) } / total
                let y = regions.reduce(0) { $0 + ($1.y + $1.height / 2) * max($1.weight, 0) } / total
                return Focus(x: min(max(x / Double(image.width), 0), 1), y: min(max(y / Double(image.height), 0), 1), regions: regions)
            }
        }
        let point = attentionPoint(in: image, crop: crop)
        return Focus(x: point.x, y: point.y, regions: [])
    }

    /// The gravity placing a crop of `crop` inside `image` around its focus point.
    public static func gravity(in image: PixelBuffer, crop: PixelSize, detector: (any FocalPointDetecting)? = nil) -> Gravity {
        let point = focusPoint(in: image, crop: crop, detector: detector)
        return Gravity(.focusPoint(x: point.x, y: point.y))
    }

    /// The attention map's peak, as fractions of the width and height (the centre of its grid cell).
    static func attentionPoint(in image: PixelBuffer, crop: PixelSize) -> (x: Double, y: Double) {
        let grid = shrunk(image)
        let columns = grid.width, rows = grid.height
        guard columns > 0, rows > 0 else { return (0.5, 0.5) }
        let cells = columns * rows
        var lightness = [Double](repeating: 0, count: cells)
        var interest = [Double](repeating: 0, count: cells)
        for i in 0..<cells {
            let (xyz, lab) = colour(grid.values[i])
            lightness[i] = lab.l
            guard xyz.y * 100 > 5 else { continue }
            let norm = (xyz.x * xyz.x + xyz.y * xyz.y + xyz.z * xyz.z).squareRoot()
            if norm > 0 {
                let dx = xyz.x / norm - 0.78, dy = xyz.y / norm - 0.57, dz = xyz.z / norm - 0.44
                interest[i] += max(0, 100 - 100 * (dx * dx + dy * dy + dz * dz).squareRoot())
            }
            interest[i] += max(0, lab.a)
        }
        for y in 0..<rows {
            for x in 0..<columns {
                func at(_ cx: Int, _ cy: Int) -> Double { lightness[min(max(cy, 0), rows - 1) * columns + min(max(cx, 0), columns - 1)] }
                let laplacian = 4 * at(x, y) - at(x - 1, y) - at(x + 1, y) - at(x, y - 1) - at(x, y + 1)
                interest[y * columns + x] += 5 * abs(laplacian)
            }
        }
        let scaleX = Double(columns) / Double(image.width), scaleY = Double(rows) / Double(image.height)
        let sigma = max(1, ((Double(crop.width) * scaleX) * (Double(crop.width) * scaleX)
            + (Double(crop.height) * scaleY) * (Double(crop.height) * scaleY)).squareRoot() / 10)
        let smooth = gaussianBlurred(interest, columns: columns, rows: rows, sigma: sigma)
        var best = 0
        for i in 1..<cells where smooth[i] > smooth[best] { best = i }
        // Nothing stands out (a flat or empty image): the centre, not the first cell.
        if let lowest = smooth.min(), smooth[best] - lowest <= 1e-9 * max(1, abs(smooth[best])) { return (0.5, 0.5) }
        return ((Double(best % columns) + 0.5) / Double(columns), (Double(best / columns) + 0.5) / Double(rows))
    }

    /// `image` averaged down to about 32 × 32 cells (fewer on a side shorter than 32), alpha-premultiplied averages of
    /// the colour, so transparent areas count as black.
    private static func shrunk(_ image: PixelBuffer) -> (width: Int, height: Int, values: [SIMD3<Double>]) {
        let columns = min(32, image.width), rows = min(32, image.height)
        var sums = [SIMD3<Double>](repeating: .zero, count: columns * rows)
        var counts = [Double](repeating: 0, count: columns * rows)
        image.withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt8.self)
            for y in 0..<image.height {
                let row = y * rows / image.height
                for x in 0..<image.width {
                    let i = (y * image.width + x) * 4, cell = row * columns + x * columns / image.width
                    let alpha = Double(src[i + 3]) / 255
                    sums[cell] += SIMD3(Double(src[i]), Double(src[i + 1]), Double(src[i + 2])) * alpha / 255
                    counts[cell] += 1
                }
            }
        }
        return (columns, rows, zip(sums, counts).map { $0.1 > 0 ? $0.0 / $0.1 : .zero })
    }

    /// sRGB (0...1) → CIE XYZ (D65, Y in 0...1) and CIELAB's L* and a*.
    private static func colour(_ rgb: SIMD3<Double>) -> (xyz: (x: Double, y: Double, z: Double), lab: (l: Double, a: Double)) {
        func linear(_ c: Double) -> Double { c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4) }
        let r = linear(rgb.x), g = linear(rgb.y), b = linear(rgb.z)
        let x = 0.4124 * r + 0.3576 * g + 0.1805 * b
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
        let z = 0.0193 * r + 0.1192 * g + 0.9505 * b
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        let fx = f(x / 0.95047), fy = f(y)
        return ((x, y, z), (116 * fy - 16, 500 * (fx - fy)))
    }

    /// A separable Gaussian blur of a small grid (edges repeat).
    private static func gaussianBlurred(_ values: [Double], columns: Int, rows: Int, sigma: Double) -> [Double] {
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        let kernel = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = kernel.reduce(0, +)
        var across = values
        for y in 0..<rows {
            for x in 0..<columns {
                var sum = 0.0
                for k in -radius...radius { sum += kernel[k + radius] * values[y * columns + min(max(x + k, 0), columns - 1)] }
                across[y * columns + x] = sum / total
            }
        }
        var result = across
        for y in 0..<rows {
            for x in 0..<columns {
                var sum = 0.0
                for k in -radius...radius { sum += kernel[k + radius] * across[min(max(y + k, 0), rows - 1) * columns + x] }
                result[y * columns + x] = sum / total
            }
        }
        return result
    }
}
