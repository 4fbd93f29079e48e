/// Reduces straight-alpha RGBA pixels to at most 256 indexed colours, as GIF needs.
///
/// Frames with few colours get an exact palette (every opaque colour kept as is). Others are
/// reduced by a variance-minimising median cut over a 5-bit-per-channel histogram, with channels
/// weighted by how strongly the eye sees them, then mapped to the nearest palette colour with
/// optional Floyd–Steinberg error diffusion. GIF has one transparent palette entry and no partial
/// alpha, so pixels below `alphaThreshold` all become that entry and the rest are drawn opaque.
struct ColorQuantizer: Sendable {
    /// Most palette entries, the transparent entry included (2 to 256).
    var maxColors: Int
    /// Diffuse the rounding error to neighbouring pixels when colours had to be reduced
    /// (smooth gradients instead of bands; exact palettes are never dithered).
    var dithering: Bool
    /// Pixels whose alpha is below this become transparent; the others become opaque.
    var alphaThreshold: UInt8

    /// A quantizer; the defaults suit GIF.
    init(maxColors: Int = 256, dithering: Bool = true, alphaThreshold: UInt8 = 128) {
        self.maxColors = min(256, max(2, maxColors))
        self.dithering = dithering
        self.alphaThreshold = alphaThreshold
    }

    /// The colour table chosen for one frame.
    struct Palette: Sendable, Equatable {
        /// RGB triples, one per entry (the transparent entry is stored as black).
        var colors: [UInt8]
        /// The entry that stands for transparent pixels, when the frame has any.
        var transparentIndex: Int?
        /// True when every opaque pixel keeps its exact colour.
        var isExact: Bool
        /// Number of entries.
        var count: Int { colors.count / 3 }
    }

    /// Quantizes `pixels`, returning the palette and one index per pixel (rows top to bottom).
    func quantize(_ pixels: PixelBuffer) -> (palette: Palette, indices: [UInt8]) {
        var palette: Palette?
        let indices = [UInt8](unsafeUninitializedCapacity: pixels.width * pixels.height) { buffer, count in
            palette = quantize(pixels, into: buffer)
            count = buffer.count
        }
        return (palette!, indices)
    }

    /// Quantizes `pixels`, writing one index per pixel into `indices` (at least width * height long).
    func quantize(_ pixels: PixelBuffer, into indices: UnsafeMutableBufferPointer<UInt8>) -> Palette {
        precondition(indices.count >= pixels.width * pixels.height, "index buffer too small")
        return pixels.withUnsafeBytes { raw in
            let source = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let output = indices.baseAddress!
            if let exact = exactPalette(source, count: pixels.width * pixels.height, into: output) {
                return exact
            }
            return reducedPalette(source, width: pixels.width, height: pixels.height, into: output)
        }
    }

    // MARK: - Exact palette

    /// The palette of every distinct colour in encounter order, or nil when there are too many.
    private func exactPalette(_ source: UnsafePointer<UInt8>, count: Int, into output: UnsafeMutablePointer<UInt8>)
        -> Palette?
    {
        // Open addressing with four times the entries it can ever hold keeps probes short.
        // Keys carry a tag bit so that 0 can mean "empty slot".
        let capacity = 1024, mask = UInt32(capacity - 1)
        let transparentKey: UInt32 = 0x0200_0000
        let keys = UnsafeMutablePointer<UInt32>.allocate(capacity: capacity)
        let values = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        keys.initialize(repeating: 0, count: capacity)
        values.initialize(repeating: 0, count: capacity)
        defer {
            keys.deallocate()
            values.deallocate()
        }
        var colors: [UInt8] = []
        colors.reserveCapacity(3 * maxColors)
        var entries = 0
        var transparentIndex: Int?
        var lastKey: UInt32 = 0, lastIndex: UInt8 = 0
        let threshold = alphaThreshold, limit = maxColors

        var p = source
        for i in 0..<count {
            let key: UInt32 =
                p[3] < threshold
                ? transparentKey : 0x0100_0000 | UInt32(p[0]) << 16 | UInt32(p[1]) << 8 | UInt32(p[2])
            p += 4
            if key == lastKey {  // runs of one colour are the common case in GIF-like art
                output[i] = lastIndex
                continue
            }
            var slot = (key &* 0x9E37_79B1) >> 22 & mask
            while true {
                let stored = keys[Int(slot)]
                if stored == key { break }
                if stored == 0 {
                    guard entries < limit else { return nil }
                    keys[Int(slot)] = key
                    values[Int(slot)] = UInt8(entries)
                    if key == transparentKey {
                        transparentIndex = entries
                        colors.append(contentsOf: [0, 0, 0])
                    } else {
                        colors.append(contentsOf: [UInt8(key >> 16 & 0xFF), UInt8(key >> 8 & 0xFF), UInt8(key & 0xFF)])
                    }
                    entries += 1
                    break
                }
                slot = (slot + 1) & mask
            }
            lastKey = key
            lastIndex = values[Int(slot)]
            output[i] = lastIndex
        }
        return Palette(colors: colors, transparentIndex: transparentIndex, isExact: true)
    }

    // MARK: - Reduced palette

    /// Perceptual channel weights (green matters most, blue least) used for both the cut and
    /// the nearest-colour search.
    fileprivate static let weights: (r: Int32, g: Int32, b: Int32) = (3, 4, 2)

    /// A box of histogram bins: `bins[start..<end]`.
    private struct Box {
        var start: Int
        var end: Int
        /// Weighted squared error of the box around its mean; the box with most is cut next.
        var error: Double
        var axis: Int
        /// Bins whose coordinate on `axis` is below this go to the first half.
        var cut: Int
    }

    private func reducedPalette(
        _ source: UnsafePointer<UInt8>, width: Int, height: Int, into output: UnsafeMutablePointer<UInt8>
    ) -> Palette {
        let count = width * height
        let threshold = alphaThreshold
        // Histogram of opaque pixels on a 32x32x32 grid, with exact colour sums per bin so the
        // palette colours are true means rather than bin centres.
        let binCount = 32 * 32 * 32
        let histogram = UnsafeMutablePointer<Int>.allocate(capacity: binCount * 4)
        histogram.initialize(repeating: 0, count: binCount * 4)
        defer { histogram.deallocate() }
        var hasTransparent = false
        var p = source
        for _ in 0..<count {
            if p[3] < threshold {
                hasTransparent = true
            } else {
                let r = Int(p[0]), g = Int(p[1]), b = Int(p[2])
                let h = histogram + ((r >> 3) << 10 | (g >> 3) << 5 | b >> 3) * 4
                h[0] += 1
                h[1] += r
                h[2] += g
                h[3] += b
            }
            p += 4
        }

        var bins: [Int32] = []
        bins.reserveCapacity(4096)
        for bin in 0..<binCount where histogram[bin * 4] > 0 { bins.append(Int32(bin)) }

        let target = maxColors - (hasTransparent ? 1 : 0)
        let refinements = 3
        var colors: [UInt8] = []
        bins.withUnsafeMutableBufferPointer { binBuffer in
            let boxes = cutBoxes(binBuffer, histogram: histogram, target: target)
            for box in boxes {
                var sums = (0, 0, 0, 0)
                for i in box.start..<box.end {
                    let h = histogram + Int(binBuffer[i]) * 4
                    sums.0 += h[0]
                    sums.1 += h[1]
                    sums.2 += h[2]
                    sums.3 += h[3]
                }
                let n = max(1, sums.0)
                colors.append(UInt8((sums.1 + n / 2) / n))
                colors.append(UInt8((sums.2 + n / 2) / n))
                colors.append(UInt8((sums.3 + n / 2) / n))
            }
        }
        bins.withUnsafeBufferPointer { refine(&colors, bins: $0, histogram: histogram, iterations: refinements) }
        var transparentIndex: Int?
        if hasTransparent {
            transparentIndex = colors.count / 3
            colors.append(contentsOf: [0, 0, 0])
        }
        mapPixels(source, width: width, height: height, colors: colors, opaqueCount: colors.count / 3
            - (hasTransparent ? 1 : 0), transparentIndex: transparentIndex, into: output)
        return Palette(colors: colors, transparentIndex: transparentIndex, isExact: false)
    }

    /// Lloyd (k-means) iterations over the histogram: each colour moves to the mean of the bins
    /// nearest to it. Median cut places boxes well but not their colours; this lowers the error.
    private func refine(_ colors: inout [UInt8], bins: UnsafeBufferPointer<Int32>, histogram: UnsafePointer<Int>,
                        iterations: Int) {
        let count = colors.count / 3
        guard count > 1 else { return }
        let sums = UnsafeMutablePointer<Int>.allocate(capacity: count * 4)
        defer { sums.deallocate() }
        for _ in 0..<iterations {
            sums.initialize(repeating: 0, count: count * 4)
            let finder = NearestColorFinder(colors: colors, count: count)
            for bin in bins {
                let h = histogram + Int(bin) * 4
                let n = h[0]
                let index = finder.search(Int32((h[1] + n / 2) / n), Int32((h[2] + n / 2) / n), Int32((h[3] + n / 2) / n))
                let s = sums + index * 4
                s[0] += n
                s[1] += h[1]
                s[2] += h[2]
                s[3] += h[3]
            }
            finder.release()
            for index in 0..<count {
                let s = sums + index * 4
                let n = s[0]
                guard n > 0 else { continue }  // an unused colour keeps its place
                colors[index * 3] = UInt8((s[1] + n / 2) / n)
                colors[index * 3 + 1] = UInt8((s[2] + n / 2) / n)
                colors[index * 3 + 2] = UInt8((s[3] + n / 2) / n)
            }
        }
    }

    /// Splits the occupied bins into at most `target` boxes, always cutting the box with the
    /// largest squared error where it reduces that error most.
    private func cutBoxes(_ bins: UnsafeMutableBufferPointer<Int32>, histogram: UnsafePointer<Int>, target: Int)
        -> [Box]
    {
        guard !bins.isEmpty else { return [] }
        var boxes = [measure(start: 0, end: bins.count, bins: bins, histogram: histogram)]
        let scratch = UnsafeMutablePointer<Int32>.allocate(capacity: bins.count)
        defer { scratch.deallocate() }
        while boxes.count < target {
            var chosen = -1
            var worst = 0.0
            for (i, box) in boxes.enumerated() where box.error > worst && box.end - box.start > 1 {
                worst = box.error
                chosen = i
            }
            if chosen < 0 { break }
            let box = boxes[chosen]
            // Stable partition on the cut axis through the scratch buffer.
            var low = box.start
            var high = 0
            let shift = Int32(10 - 5 * box.axis)
            for i in box.start..<box.end {
                let bin = bins[i]
                if Int((bin >> shift) & 31) < box.cut {
                    bins[low] = bin
                    low += 1
                } else {
                    scratch[high] = bin
                    high += 1
                }
            }
            for i in 0..<high { bins[low + i] = scratch[i] }
            boxes[chosen] = measure(start: box.start, end: low, bins: bins, histogram: histogram)
            boxes.append(measure(start: low, end: box.end, bins: bins, histogram: histogram))
        }
        return boxes
    }

    /// Computes a box's error and its best cut: the axis with most weighted variance, cut where
    /// the two halves' means are furthest apart (the between-class variance criterion).
    private func measure(start: Int, end: Int, bins: UnsafeMutableBufferPointer<Int32>, histogram: UnsafePointer<Int>)
        -> Box
    {
        // Per axis, 32 slots of (pixel count, sum of that channel) along the axis.
        var slots = [Double](repeating: 0, count: 3 * 32 * 2)
        var weight = 0
        var sum = (0.0, 0.0, 0.0), squares = (0.0, 0.0, 0.0)
        slots.withUnsafeMutableBufferPointer { s in
            for i in start..<end {
                let bin = Int(bins[i])
                let h = histogram + bin * 4
                let n = h[0]
                let w = Double(n)
                let r = Double(h[1]), g = Double(h[2]), b = Double(h[3])
                weight += n
                sum.0 += r
                sum.1 += g
                sum.2 += b
                // Squares of bin means: the spread inside a bin (8 levels) is small and ignored.
                squares.0 += r * r / w
                squares.1 += g * g / w
                squares.2 += b * b / w
                let rSlot = (bin >> 10) & 31, gSlot = (bin >> 5) & 31, bSlot = bin & 31
                s[rSlot * 2] += w
                s[rSlot * 2 + 1] += r
                s[64 + gSlot * 2] += w
                s[64 + gSlot * 2 + 1] += g
                s[128 + bSlot * 2] += w
                s[128 + bSlot * 2 + 1] += b
            }
        }
        let total = Double(max(weight, 1))
        let weights = [Double(Self.weights.r), Double(Self.weights.g), Double(Self.weights.b)]
        let variances = [
            weights[0] * (squares.0 - sum.0 * sum.0 / total),
            weights[1] * (squares.1 - sum.1 * sum.1 / total),
            weights[2] * (squares.2 - sum.2 * sum.2 / total),
        ]
        var bestAxis = 0, bestCut = 0
        var bestGain = -1.0
        for axis in 0..<3 {
            // Only an axis with at least two occupied slots can be cut.
            var seenWeight = 0.0, seenSum = 0.0
            let channelSum = axis == 0 ? sum.0 : axis == 1 ? sum.1 : sum.2
            for slot in 0..<31 {
                seenWeight += slots[axis * 64 + slot * 2]
                seenSum += slots[axis * 64 + slot * 2 + 1]
                let rest = total - seenWeight
                guard seenWeight > 0, rest > 0 else { continue }
                let restSum = channelSum - seenSum
                // Reduction of this axis's squared error achieved by cutting here.
                let gain = weights[axis]
                    * (seenSum * seenSum / seenWeight + restSum * restSum / rest - channelSum * channelSum / total)
                if gain > bestGain || (gain == bestGain && variances[axis] > variances[bestAxis]) {
                    bestGain = gain
                    bestAxis = axis
                    bestCut = slot + 1
                }
            }
        }
        let error = bestGain < 0 ? 0 : max(variances[0] + variances[1] + variances[2], 1e-9)
        return Box(start: start, end: end, error: error, axis: bestAxis, cut: bestCut)
    }

    // MARK: - Mapping

    /// Maps every pixel to its nearest palette colour, diffusing the error when dithering.
    private func mapPixels(
        _ source: UnsafePointer<UInt8>, width: Int, height: Int, colors: [UInt8], opaqueCount: Int,
        transparentIndex: Int?, into output: UnsafeMutablePointer<UInt8>
    ) {
        let threshold = alphaThreshold
        let transparent = UInt8(transparentIndex ?? 0)
        guard opaqueCount > 0 else {
            output.update(repeating: transparent, count: width * height)
            return
        }
        let finder = NearestColorFinder(colors: colors, count: opaqueCount)
        defer { finder.release() }

        // Errors in 1/16 units for this row and the next, with a one-pixel margin each side.
        let stride = (width + 2) * 3
        let errors = UnsafeMutablePointer<Int32>.allocate(capacity: stride * 2)
        errors.initialize(repeating: 0, count: stride * 2)
        defer { errors.deallocate() }
        var current = errors, next = errors + stride
        let dither = dithering

        for y in 0..<height {
            // Serpentine order keeps the diffusion from drifting in one direction.
            let reverse = dither && y & 1 == 1
            let step = reverse ? -1 : 1
            var x = reverse ? width - 1 : 0
            next.update(repeating: 0, count: stride)
            for _ in 0..<width {
                let offset = y * width + x
                let p = source + offset * 4
                if p[3] < threshold {
                    output[offset] = transparent
                    x += step
                    continue
                }
                var r = Int32(p[0]), g = Int32(p[1]), b = Int32(p[2])
                let e = current + (x + 1) * 3
                if dither {
                    r = min(255, max(0, r + (e[0] + 8) >> 4))
                    g = min(255, max(0, g + (e[1] + 8) >> 4))
                    b = min(255, max(0, b + (e[2] + 8) >> 4))
                }
                let index = finder.nearest(r, g, b)
                output[offset] = UInt8(index)
                if dither {
                    let c = finder.color(index)
                    let er = r - c.r, eg = g - c.g, eb = b - c.b
                    // Floyd–Steinberg weights 7/16 ahead, 3/16 behind below, 5/16 below, 1/16 ahead below.
                    let ahead = e + 3 * step
                    ahead[0] += er * 7
                    ahead[1] += eg * 7
                    ahead[2] += eb * 7
                    let below = next + (x + 1) * 3
                    let belowBehind = below - 3 * step, belowAhead = below + 3 * step
                    belowBehind[0] += er * 3
                    belowBehind[1] += eg * 3
                    belowBehind[2] += eb * 3
                    below[0] += er * 5
                    below[1] += eg * 5
                    below[2] += eb * 5
                    belowAhead[0] += er
                    belowAhead[1] += eg
                    belowAhead[2] += eb
                }
                x += step
            }
            swap(&current, &next)
        }
    }
}

/// Nearest palette colour under the weighted distance, searched outward from the query's green
/// value in a palette sorted by green, with results cached on a 6-bit-per-channel grid.
private struct NearestColorFinder {
    let count: Int
    /// Sorted by green: r, g, b, original index.
    let sorted: UnsafeMutablePointer<Int32>
    /// Palette in original order: r, g, b.
    let palette: UnsafeMutablePointer<Int32>
    /// Nearest index + 1 per 64x64x64 cell, 0 when not computed yet.
    let cache: UnsafeMutablePointer<UInt16>

    init(colors: [UInt8], count: Int) {
        self.count = count
        sorted = .allocate(capacity: count * 4)
        palette = .allocate(capacity: count * 3)
        cache = .allocate(capacity: 64 * 64 * 64)
        cache.initialize(repeating: 0, count: 64 * 64 * 64)
        let order = (0..<count).sorted { colors[$0 * 3 + 1] < colors[$1 * 3 + 1] }
        for (position, index) in order.enumerated() {
            sorted[position * 4] = Int32(colors[index * 3])
            sorted[position * 4 + 1] = Int32(colors[index * 3 + 1])
            sorted[position * 4 + 2] = Int32(colors[index * 3 + 2])
            sorted[position * 4 + 3] = Int32(index)
        }
        for i in 0..<count * 3 { palette[i] = Int32(colors[i]) }
    }

    func release() {
        sorted.deallocate()
        palette.deallocate()
        cache.deallocate()
    }

    func color(_ index: Int) -> (r: Int32, g: Int32, b: Int32) {
        (palette[index * 3], palette[index * 3 + 1], palette[index * 3 + 2])
    }

    func nearest(_ r: Int32, _ g: Int32, _ b: Int32) -> Int {
        let cell = Int(r >> 2) << 12 | Int(g >> 2) << 6 | Int(b >> 2)
        let cached = cache[cell]
        if cached != 0 { return Int(cached) - 1 }
        // Search for the cell's centre so the cached answer does not depend on which pixel came first.
        let index = search((r & ~3) + 2, (g & ~3) + 2, (b & ~3) + 2)
        cache[cell] = UInt16(index + 1)
        return index
    }

    func search(_ r: Int32, _ g: Int32, _ b: Int32) -> Int {
        let (wr, wg, wb) = ColorQuantizer.weights
        // First entry whose green is >= g.
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid * 4 + 1] < g { low = mid + 1 } else { high = mid }
        }
        var best = Int32.max, bestIndex = 0
        // Measures the entry at `position` unless its green distance alone already loses; false then, and as the
        // entries are sorted by green, so does every entry further out on that side.
        func visit(_ position: Int) -> Bool {
            let s = sorted + position * 4
            let dg = s[1] - g
            guard wg * dg * dg < best else { return false }
            let dr = s[0] - r, db = s[2] - b
            let d = wr * dr * dr + wg * dg * dg + wb * db * db
            if d < best {
                best = d
                bestIndex = Int(s[3])
            }
            return true
        }
        var up = low, down = low - 1
        while up < count || down >= 0 {
            if up < count { up = visit(up) ? up + 1 : count }
            if down >= 0 { down = visit(down) ? down - 1 : -1 }
        }
        return bestIndex
    }
}
