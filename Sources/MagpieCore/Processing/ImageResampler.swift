/// Resizes pixels with a separable convolution (horizontal pass, then vertical).
///
/// Colour is premultiplied by alpha while filtering: averaging straight-alpha
/// pixels would let the (undefined, often black) colour of transparent pixels bleed
/// into their neighbours as a dark halo. Accumulation is in `SIMD4<Float>`, one
/// lane per channel.
public enum ImageResampler {
    /// How much downscaling is left to the filter after the box pre-reduction: large reductions are
    /// first box-averaged by a whole factor that leaves at least this factor (2) to the filter, which
    /// looks the same as filtering all the way and is much faster. Not used for ``ResamplingFilter/nearest``.
    public static let reducingGap = 2

    /// `pixels` resized to exactly `size` with `filter` (the aspect ratio may change).
    ///
    /// - Parameters:
    ///   - pixels: The source pixels.
    ///   - size: The output size in pixels; both sides positive.
    ///   - filter: The resampling kernel (default ``ResamplingFilter/lanczos3``).
    ///   - isCancelled: Asked every few output rows; once it answers true the resize stops (default: never).
    /// - Returns: The resized pixels; `pixels` itself when the size is unchanged.
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidTargetSize(_:)`` for a non-positive size or
    ///   ``MagpieError/ProcessingFailureReason/cancelled`` when `isCancelled` answered true, or
    ///   ``MagpieError/imageCreationFailed(reason:)`` when the output cannot be allocated.
    public static func resize(
        _ pixels: PixelBuffer, to size: PixelSize, filter: ResamplingFilter = .lanczos3,
        isCancelled: () -> Bool = { false }
    ) throws -> PixelBuffer {
        guard size.width > 0, size.height > 0 else {
            throw MagpieError.processingFailed(reason: .invalidTargetSize(size))
        }
        if size.width == pixels.width && size.height == pixels.height { return pixels }
        if let factors = reduction(from: PixelSize(width: pixels.width, height: pixels.height), to: size, filter: filter) {
            let reduced = try BoxReducer.reduce(pixels, factorX: factors.x, factorY: factors.y)
            return try convolve(reduced, to: size, filter: filter, isCancelled: isCancelled)
        }
        return try convolve(pixels, to: size, filter: filter, isCancelled: isCancelled)
    }

    /// The whole factors `resize` box-averages by before filtering; nil when it filters the source directly.
    private static func reduction(from source: PixelSize, to size: PixelSize, filter: ResamplingFilter) -> (x: Int, y: Int)? {
        // A target side past Int.max / 2 (the public API takes any size) leaves nothing to reduce, rather than trapping.
        func factor(_ from: Int, _ to: Int) -> Int {
            let (span, overflow) = to.multipliedReportingOverflow(by: reducingGap)
            return overflow ? 0 : from / span
        }
        let fx = factor(source.width, size.width), fy = factor(source.height, size.height)
        guard filter != .nearest, fx > 1 || fy > 1 else { return nil }
        return (max(1, fx), max(1, fy))
    }

    /// An upper bound of the bytes `resize` holds besides its input and its output: the box-reduced copy (when it
    /// reduces first), the weight tables of both passes, the ring of horizontally filtered float rows and the row
    /// buffers. Computed from the sizes alone, so processors check it against the limits before anything is allocated
    /// (the tables grow with the target's sides: 49 million rows once took a gigabyte of them).
    static func scratchBytes(from source: PixelSize, to size: PixelSize, filter: ResamplingFilter = .lanczos3) -> Int {
        var input = source
        var total = 0
        if let factors = reduction(from: source, to: size, filter: filter) {
            input = PixelSize(width: (source.width + factors.x - 1) / factors.x, height: (source.height + factors.y - 1) / factors.y)
            total = input.width.saturatingMultiply(input.height).saturatingMultiply(4)
        }
        let float4 = MemoryLayout<SIMD4<Float>>.stride
        let verticalTaps = Contributions.maximumTaps(source: input.height, destination: size.height, filter: filter)
        let ring = size.width.saturatingMultiply(min(input.height, verticalTaps + 2)).saturatingMultiply(float4)
        let rows = input.width.saturatingAdd(size.width).saturatingMultiply(float4)
        let tables = Contributions.bytes(source: input.width, destination: size.width, filter: filter)
            .saturatingAdd(Contributions.bytes(source: input.height, destination: size.height, filter: filter))
        return total.saturatingAdd(ring).saturatingAdd(rows).saturatingAdd(tables)
    }

    private static func convolve(
        _ pixels: PixelBuffer, to size: PixelSize, filter: ResamplingFilter, isCancelled: () -> Bool
    ) throws -> PixelBuffer {
        // The output first: a target too large to allocate (`resize:6111111111110x4622`, found by the
        // spec fuzzer) must be a typed error before the weight tables and rows are sized by it.
        var output = try PixelBuffer.uninitialized(width: size.width, height: size.height)
        let opaque = pixels.isOpaque
        let columns = Contributions(source: pixels.width, destination: size.width, filter: filter)
        let rows = Contributions(source: pixels.height, destination: size.height, filter: filter)

        // Two passes, streamed: each source row the vertical pass needs is resampled horizontally into premultiplied
        // floats once, into a ring of as many rows as the widest vertical filter reads (plus slack), not a whole
        // intermediate image — which held output width × source height × 16 bytes (1.5 MB for a 256-px thumbnail
        // of a 640×360 decode, 128 MB for 6000×4000 → 2000×1333). Each row is summed in right after it is looked up,
        // so the result never depends on the ring's size; a slot remembers its row, and a ring as tall as the widest
        // window (plus slack for windows that step back) computes each source row once.
        let intermediateWidth = size.width
        let ringRows = min(pixels.height, rows.stride + 2)
        var ring = [SIMD4<Float>](repeating: .zero, count: intermediateWidth * ringRows)
        var slotRow = [Int](repeating: -1, count: ringRows)
        var line = [SIMD4<Float>](repeating: .zero, count: pixels.width)
        var accumulator = [SIMD4<Float>](repeating: .zero, count: size.width)
        var cancelled = false
        pixels.withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt8.self)
            output.withUnsafeMutableBytes { outRaw in
                let dst = outRaw.bindMemory(to: UInt8.self)
                ring.withUnsafeMutableBufferPointer { mid in
                    line.withUnsafeMutableBufferPointer { line in
                        accumulator.withUnsafeMutableBufferPointer { acc in
                            columns.withPointers { cFirst, cCount, cWeights, cStride in
                                rows.withPointers { first, count, weights, stride in
                                    /// Source row `y` resampled horizontally into ring slot `slot`.
                                    func horizontal(_ y: Int, into slot: Int) {
                                        let row = UnsafeRawPointer(src.baseAddress! + y * pixels.width * 4)
                                        for x in 0..<pixels.width {
                                            let v = load(row + x &* 4)
                                            line[x] = opaque ? v : premultiply(v)
                                        }
                                        let outBase = slot * intermediateWidth
                                        for x in 0..<intermediateWidth {
                                            let start = cFirst[x], taps = cCount[x], w = x &* cStride
                                            // Two sums: one would make each tap wait for the previous addition.
                                            var even = SIMD4<Float>.zero, odd = SIMD4<Float>.zero
                                            var k = 0
                                            while k &+ 1 < taps {
                                                even += line[start &+ k] * cWeights[w &+ k]
                                                odd += line[start &+ k &+ 1] * cWeights[w &+ k &+ 1]
                                                k &+= 2
                                            }
                                            if k < taps { even += line[start &+ k] * cWeights[w &+ k] }
                                            mid[outBase &+ x] = even + odd
                                        }
                                    }
                                    // Vertical pass: whole intermediate rows are scaled and summed into one
                                    // accumulator row, so memory is read sequentially rather than a row apart per tap.
                                    for y in 0..<size.height {
                                        // A tall target takes seconds: a caller that gave up stops it between rows.
                                        if y & 63 == 63, isCancelled() {
                                            cancelled = true
                                            return
                                        }
                                        acc.update(repeating: .zero)
                                        for k in 0..<count[y] {
                                            let sourceRow = first[y] + k
                                            let slot = sourceRow % ringRows
                                            if slotRow[slot] != sourceRow {
                                                horizontal(sourceRow, into: slot)
                                                slotRow[slot] = sourceRow
                                            }
                                            let w = weights[y * stride + k]
                                            let row = slot * intermediateWidth
                                            for x in 0..<size.width { acc[x] += mid[row &+ x] * w }
                                        }
                                        let outRow = UnsafeMutableRawPointer(dst.baseAddress! + y * size.width * 4)
                                        for x in 0..<size.width {
                                            var v = opaque ? store(acc[x]) : unpremultiply(acc[x])
                                            if opaque { v.w = 255 }
                                            outRow.storeBytes(of: v, toByteOffset: x &* 4, as: SIMD4<UInt8>.self)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if cancelled { throw MagpieError.processingFailed(reason: .cancelled) }
        return output
    }

    @inline(__always)
    private static func premultiply(_ v: SIMD4<Float>) -> SIMD4<Float> {
        let a = v.w / 255
        return SIMD4(v.x * a, v.y * a, v.z * a, v.w)
    }

    /// Four bytes of a row as floats (0...255).
    @inline(__always)
    private static func load(_ pixel: UnsafeRawPointer) -> SIMD4<Float> {
        SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: pixel.loadUnaligned(as: SIMD4<UInt8>.self)))
    }

    /// `v` rounded half up and clamped to 0...255, as bytes: `UInt8(clamped(v + 0.5))` without a trapping conversion
    /// per lane, which was a fifth of the resampler's time (perf). Adding 2^23 leaves the nearest integer in the low
    /// mantissa bits (ties to even); one less where that rounded up gives the truncation.
    @inline(__always)
    static func store(_ v: SIMD4<Float>) -> SIMD4<UInt8> {
        var x = v + 0.5
        // Masked replacements rather than `clamped`, which compiled to two out-of-line calls per pixel.
        x.replace(with: 0, where: x .< 0)
        x.replace(with: 255, where: x .> 255)
        let shifted = x + 8_388_608
        let nearest = unsafeBitCast(shifted, to: SIMD4<Int32>.self) & 0xFF
        let truncated = nearest.replacing(with: nearest &- 1, where: (shifted - 8_388_608) .> x)
        return SIMD4<UInt8>(truncatingIfNeeded: truncated)
    }

    @inline(__always)
    private static func unpremultiply(_ v: SIMD4<Float>) -> SIMD4<UInt8> {
        let alpha = min(max(v.w, 0), 255)
        guard alpha >= 0.5 else { return .zero }
        // Ringing can push premultiplied colour above alpha; clamp before dividing.
        let colour = SIMD4(v.x, v.y, v.z, 0).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: alpha))
        let scaled = colour * (255 / alpha) + 0.5
        return SIMD4(UInt8(min(scaled.x, 255)), UInt8(min(scaled.y, 255)), UInt8(min(scaled.z, 255)), UInt8(alpha + 0.5))
    }

    /// For each output index: the first source index, the number of taps, and the
    /// normalised weights, stored contiguously at `index * stride` (no nested arrays in
    /// the inner loops, and none while building: one small array per output index once
    /// made a 49-million-row target cost gigabytes of allocations).
    struct Contributions {
        var first: [Int]
        var count: [Int]
        var weights: [Float]
        var stride = 1

        /// The most source samples one output index can read: the filter's window at this scale, plus one for the
        /// rounding at each end. An upper bound of ``stride``.
        static func maximumTaps(source: Int, destination: Int, filter: ResamplingFilter) -> Int {
            if filter == .nearest { return 1 }
            let widen = max(Double(source) / Double(destination), 1)
            let window = (2 * filter.support * widen).rounded(.up) + 2
            return Int(min(window, Double(max(source, 1))))
        }

        /// An upper bound of the tables' bytes for these sizes.
        static func bytes(source: Int, destination: Int, filter: ResamplingFilter) -> Int {
            let perIndex = 2 * MemoryLayout<Int>.stride
                + maximumTaps(source: source, destination: destination, filter: filter) * MemoryLayout<Float>.stride
            return destination.saturatingMultiply(perIndex)
        }

        init(source: Int, destination: Int, filter: ResamplingFilter) {
            let scale = Double(source) / Double(destination)
            let widen = max(scale, 1)
            let support = filter.support * widen
            let capacity = Self.maximumTaps(source: source, destination: destination, filter: filter)
            first = [Int](repeating: 0, count: destination)
            count = [Int](repeating: 1, count: destination)
            // Written at `i * capacity` first, then packed down to the widest window actually used.
            weights = [Float](repeating: 0, count: capacity * destination)
            var window = [Double](repeating: 0, count: capacity)
            var widest = 1
            for i in 0..<destination {
                let center = (Double(i) + 0.5) * scale
                let nearest = min(source - 1, Int(center))
                func single() {
                    first[i] = nearest
                    weights[i * capacity] = 1
                }
                if filter == .nearest {
                    single()
                    continue
                }
                let lo = max(Int((center - support).rounded(.down)), 0)
                let hi = min(Int((center + support).rounded(.up)), source)
                let taps = min(max(hi, lo + 1) - lo, capacity)
                var sum = 0.0
                for k in 0..<taps {
                    window[k] = filter.weight((Double(lo + k) + 0.5 - center) / widen)
                    sum += window[k]
                }
                if sum == 0 {
                    single()
                    continue
                }
                // Drop zero weights at the ends to keep the inner loops short.
                var start = 0, end = taps
                while start < end - 1 && window[start] == 0 { start += 1 }
                while end - 1 > start && window[end - 1] == 0 { end -= 1 }
                first[i] = lo + start
                count[i] = end - start
                widest = max(widest, end - start)
                for k in start..<end { weights[i * capacity + k - start] = Float(window[k] / sum) }
            }
            stride = widest
            if widest < capacity {
                for i in 0..<destination {
                    for k in 0..<widest { weights[i * widest + k] = weights[i * capacity + k] }
                }
                weights.removeLast(weights.count - widest * destination)
            }
        }

        /// Calls `body` with unchecked views of the tables, for the inner loops.
        func withPointers<R>(
            _ body: (UnsafeBufferPointer<Int>, UnsafeBufferPointer<Int>, UnsafeBufferPointer<Float>, Int) -> R
        ) -> R {
            first.withUnsafeBufferPointer { f in
                count.withUnsafeBufferPointer { c in
                    weights.withUnsafeBufferPointer { w in body(f, c, w, stride) }
                }
            }
        }
    }
}

extension PixelSize {
    /// This size scaled to fit inside `box`, keeping the aspect ratio (never larger than `box`, at least 1x1).
    /// Scales up as well as down; sides are rounded to the nearest pixel.
    ///
    /// - Parameter box: The size to fit in; both sides should be positive.
    public func fitting(in box: PixelSize) -> PixelSize {
        let factor = min(Double(box.width) / Double(width), Double(box.height) / Double(height))
        return PixelSize(width: Self.side(Double(width) * factor),
                         height: Self.side(Double(height) * factor))
    }

    /// This size scaled to cover `box`, keeping the aspect ratio (at least as large as `box` on both sides,
    /// at least 1x1). Scales up as well as down; sides are rounded to the nearest pixel.
    ///
    /// - Parameter box: The size to cover; both sides should be positive.
    public func filling(_ box: PixelSize) -> PixelSize {
        let factor = max(Double(box.width) / Double(width), Double(box.height) / Double(height))
        return PixelSize(width: Self.side(Double(width) * factor),
                         height: Self.side(Double(height) * factor))
    }

    /// A scaled side rounded to whole pixels, at least 1 and saturating at 2^62 instead of trapping: a box such as
    /// `1x9000000000000000000` (a legal text form) scales the other side past `Int.max`, and the processors' size limit
    /// refuses it with a typed error afterwards.
    private static func side(_ scaled: Double) -> Int {
        guard scaled.isFinite else { return 1 << 62 }
        return max(1, Int(min(scaled.rounded(), Double(1 << 62))))
    }
}

extension Image {
    /// Every frame resized to exactly `size` (the aspect ratio may change); durations are kept.
    ///
    /// - Parameters:
    ///   - size: The output size in pixels.
    ///   - filter: The resampling kernel (default ``ResamplingFilter/lanczos3``).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidTargetSize(_:)`` for a non-positive size.
    public func resized(to size: PixelSize, filter: ResamplingFilter = .lanczos3) throws -> Image {
        try resized(to: size, filter: filter, isCancelled: { false })
    }

    /// Every frame resized to exactly `size`, stopping once `isCancelled` answers true (it is asked every few rows).
    ///
    /// - Throws: As ``resized(to:filter:)``, and ``MagpieError/ProcessingFailureReason/cancelled``.
    func resized(to size: PixelSize, filter: ResamplingFilter = .lanczos3, isCancelled: () -> Bool) throws -> Image {
        try mapFrames { try ImageResampler.resize($0, to: size, filter: filter, isCancelled: isCancelled) }
    }

    /// Every frame resized to fit inside `box` keeping the aspect ratio; never enlarged unless `upscale`.
    ///
    /// - Parameters:
    ///   - box: The size to fit in, in pixels.
    ///   - upscale: Enlarge images smaller than `box` too (default false: they are returned unchanged).
    ///   - filter: The resampling kernel (default ``ResamplingFilter/lanczos3``).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidTargetSize(_:)`` for a non-positive `box`.
    public func resized(toFit box: PixelSize, upscale: Bool = false, filter: ResamplingFilter = .lanczos3) throws -> Image {
        guard box.width > 0, box.height > 0 else {
            throw MagpieError.processingFailed(reason: .invalidTargetSize(box))
        }
        let target = pixelSize.fitting(in: box)
        if !upscale && (target.width >= width || target.height >= height) { return self }
        return try resized(to: target, filter: filter)
    }
}
