/// Gaussian blur whose standard deviation is `blurRadius` pixels (the meaning of Pillow's
/// `GaussianBlur(radius)`). Text form: `blur:R`.
///
/// The Gaussian is approximated by three extended box blurs per direction, so the cost per
/// pixel does not depend on the radius. Colour is blurred premultiplied by alpha, so
/// transparent pixels do not darken the edges of opaque ones; pixels beyond the edges repeat
/// the edge pixel.
public struct BlurImageProcessor: ImageProcessor {
    /// The Gaussian's standard deviation in pixels; 0 leaves the image unchanged.
    public let blurRadius: Double

    /// A processor blurring with standard deviation `blurRadius` pixels.
    ///
    /// - Parameter blurRadius: The Gaussian's standard deviation in pixels, ≥ 0; checked when processing.
    public init(blurRadius: Double) {
        self.blurRadius = blurRadius
    }

    /// The text form, `blur:R`, for example `blur:4` or `blur:2.5`; ``ImageProcessorSpec/parse(_:)`` reads it back.
    public var identifier: String { "blur:\(DecimalText.format(blurRadius))" }

    /// The blurred image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   for a negative or non-finite radius; ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard blurRadius.isFinite, blurRadius >= 0 else {
            throw MagpieError.processingFailed(
                reason: .invalidParameter(processor: identifier, message: "blur radius must be a finite number ≥ 0"))
        }
        return try processImage(item, context: context) { image in
            guard blurRadius > 0 else { return image }
            // The output frames and one frame's float planes (16 bytes a pixel) are held at once: checked first.
            let layout = BoxBlur.Layout(width: image.width, height: image.height, sigma: blurRadius)
            try checkOutput(image.pixelSize, frameCount: image.frames.count, scratchBytes: layout.scratchBytes, context: context)
            return try image.mapFrames { try BoxBlur.gaussian($0, sigma: blurRadius, isCancelled: context.isCancelled) }
        }
    }
}

/// Three extended box passes per direction with running sums, on premultiplied `SIMD4<Float>`
/// pixels.
///
/// Every pass runs over a padded line of "elements", each a small group of pixels that are
/// blurred independently side by side: the horizontal passes interleave a few rows, the
/// vertical passes take a strip of a few columns. Sweeping whole groups keeps the inner loop
/// free of a serial dependency on one running sum and keeps every line in cache.
/// The horizontally blurred image is held as floats: 16 bytes a pixel while it runs, whatever
/// the radius (the padding lives only in the two line buffers; see ``Layout``).
enum BoxBlur {
    /// Pixels per element (rows interleaved, or columns per strip).
    @inline(__always) static var group: Int { 8 }

    /// One extended box: `radius` whole taps each side plus `fraction` of the next.
    struct Box {
        var radius: Int
        var fraction: Float

        /// The box whose variance is `sigma² / passes`, so `passes` of them have the
        /// Gaussian's variance. A box of radius r has variance r(r+1)/3; the fractional end taps
        /// make up the rest (solving for the weight that hits the variance exactly).
        init(sigma: Double, passes: Int) {
            let variance = sigma * sigma / Double(passes)
            var r = Int(((12 * variance + 1).squareRoot() - 1) / 2)
            while Double((r + 1) * (r + 2)) / 3 <= variance { r += 1 }
            while r > 0 && Double(r * (r + 1)) / 3 > variance { r -= 1 }
            let rr = Double(r)
            let fraction = (2 * rr + 1) * (variance - rr * (rr + 1) / 3) / (2 * ((rr + 1) * (rr + 1) - variance))
            self.radius = r
            self.fraction = Float(min(max(fraction, 0), 1))
        }

        /// Elements of padding each side of a line.
        var pad: Int { radius + 1 }
        var weight: Float { Float(2 * radius + 1) + 2 * fraction }
    }

    /// The boxes and buffer sizes of one blur.
    struct Layout {
        let across: Box, down: Box
        /// Vertical strips of `group` columns.
        let strips: Int
        /// Elements per strip of the horizontally blurred image: one per row, no padding.
        let stripStride: Int
        /// Elements of each padded line buffer (the longer side plus its padding).
        let lineLength: Int

        init(width: Int, height: Int, sigma: Double) {
            // Far beyond a side's length more blur changes next to nothing along it, but the padding would keep growing
            // with the radius. Each direction is capped by its own side: with one cap for both, `blur:1000000` on a
            // 100000×1 strip padded its one-pixel columns by 400,000 rows (~1 TB of scratch; found in review).
            across = Box(sigma: min(sigma, Double(4 * width)), passes: 3)
            down = Box(sigma: min(sigma, Double(4 * height)), passes: 3)
            strips = (width + group - 1) / group
            // The strips are not padded: each is copied into a padded line for its vertical passes. Padded strips cost
            // up to 9× the rows (a large radius pads each end by up to 4× the height): ~144 bytes a pixel, not 16.
            stripStride = height * group
            lineLength = max(width + 2 * across.pad, height + 2 * down.pad)
        }

        /// Bytes of float scratch: the horizontally blurred image and two line buffers.
        var scratchBytes: Int { (strips * stripStride + 2 * lineLength * group) * MemoryLayout<SIMD4<Float>>.stride }
    }

    static func gaussian(_ pixels: PixelBuffer, sigma: Double, isCancelled: () -> Bool = { false }) throws -> PixelBuffer {
        let width = pixels.width, height = pixels.height
        let layout = Layout(width: width, height: height, sigma: sigma)
        let across = layout.across, down = layout.down, strips = layout.strips, stripStride = layout.stripStride
        let g = group
        let opaque = pixels.isOpaque
        var output = try PixelBuffer.uninitialized(width: width, height: height)

        // The horizontally blurred image, as vertical strips of g columns.
        let middle = try allocate(strips, stripStride)
        defer { middle.deallocate() }
        let lineA = try allocate(layout.lineLength, g), lineB = try allocate(layout.lineLength, g)
        defer {
            lineA.deallocate()
            lineB.deallocate()
        }

        // Asked between groups of rows and strips: a large image takes seconds, and a caller may have given up.
        var cancelled = false
        pixels.withUnsafeBytes { raw in
            let src = raw.baseAddress!
            for firstRow in stride(from: 0, to: height, by: g) {
                if firstRow & 255 == 0, isCancelled() {
                    cancelled = true
                    return
                }
                // Interleave g rows (repeating the last row past the bottom): element x holds
                // pixel x of each row.
                let rows = (0..<g).map { min(firstRow + $0, height - 1) * width * 4 }
                rows.withUnsafeBufferPointer { rows in
                    for x in 0..<width {
                        let element = lineA + (across.pad + x) * g
                        for k in 0..<g {
                            element[k] = load(src.loadUnaligned(fromByteOffset: rows[k] + x * 4, as: SIMD4<UInt8>.self), premultiply: !opaque)
                        }
                    }
                }
                sweep(lineA, lineB, count: width, box: across)
                // Columns past the right edge repeat the last one, so the last strip holds
                // no garbage (NaNs and denormals would slow the vertical passes down).
                for strip in 0..<strips {
                    let block = middle + strip * stripStride + firstRow * g
                    for k in 0..<min(g, height - firstRow) {
                        for j in 0..<g {
                            let x = min(strip * g + j, width - 1)
                            block[k * g + j] = lineB[(across.pad + x) * g + k]
                        }
                    }
                }
            }
        }

        if cancelled { throw MagpieError.processingFailed(reason: .cancelled) }
        output.withUnsafeMutableBytes { raw in
            let dst = raw.baseAddress!
            for strip in 0..<strips {
                if strip & 31 == 31, isCancelled() {
                    cancelled = true
                    return
                }
                (lineB + down.pad * g).update(from: middle + strip * stripStride, count: stripStride)
                sweep(lineB, lineA, count: height, box: down)
                let firstColumn = strip * g
                let columns = min(g, width - firstColumn)
                for y in 0..<height {
                    let element = lineA + (down.pad + y) * g
                    let offset = (y * width + firstColumn) * 4
                    for k in 0..<columns {
                        dst.storeBytes(of: store(element[k], unpremultiply: !opaque), toByteOffset: offset + k * 4, as: SIMD4<UInt8>.self)
                    }
                }
            }
        }
        if cancelled { throw MagpieError.processingFailed(reason: .cancelled) }
        return output
    }

    /// Three box passes over `count` elements at offset `pad` of `line`, ending in `scratch`
    /// (at the same offset); `line` is overwritten on the way.
    @inline(__always)
    static func sweep(
        _ line: UnsafeMutablePointer<SIMD4<Float>>, _ scratch: UnsafeMutablePointer<SIMD4<Float>>, count: Int, box: Box
    ) {
        pass(line, into: scratch, count: count, box: box)
        pass(scratch, into: line, count: count, box: box)
        pass(line, into: scratch, count: count, box: box)
    }

    /// One extended box pass: output element x = (sum of input x-r...x+r, plus `fraction` of
    /// x-r-1 and x+r+1) / weight, with a running sum. Fills the input's padding first (edges
    /// repeat).
    @inline(__always)
    static func pass(
        _ input: UnsafeMutablePointer<SIMD4<Float>>, into output: UnsafeMutablePointer<SIMD4<Float>>, count: Int, box: Box
    ) {
        let g = group, r = box.radius, pad = box.pad
        for p in 0..<pad {
            (input + p * g).update(from: input + pad * g, count: g)
            (input + (pad + count + p) * g).update(from: input + (pad + count - 1) * g, count: g)
        }
        let scale = 1 / box.weight, fraction = box.fraction
        withUnsafeTemporaryAllocation(of: SIMD4<Float>.self, capacity: g) { sums in
            // In padded indices, output x needs input x+1...x+2r+1 whole and x, x+2r+2 in part.
            for k in 0..<g {
                var sum = SIMD4<Float>.zero
                for i in 1...(2 * r + 1) { sum += input[i * g + k] }
                sums[k] = sum
            }
            for x in 0..<count {
                let outer = input + x * g, far = input + (x + 2 * r + 2) * g, near = input + (x + 1) * g
                let out = output + (pad + x) * g
                for k in 0..<g {
                    let sum = sums[k]
                    out[k] = (sum + fraction * (outer[k] + far[k])) * scale
                    sums[k] = sum + (far[k] - near[k])
                }
            }
        }
    }

    @inline(__always)
    static func load(_ bytes: SIMD4<UInt8>, premultiply: Bool) -> SIMD4<Float> {
        let value = PixelMath.floats(bytes)
        guard premultiply else { return value }
        let alpha = value.w * (1 / 255)
        return value * SIMD4(alpha, alpha, alpha, 1)
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, unpremultiply: Bool) -> SIMD4<UInt8> {
        var value = value
        if unpremultiply {
            let alpha = value.w
            guard alpha >= 0.5 else { return .zero }
            value *= SIMD4(repeating: 255 / alpha)
            value.w = alpha
        }
        return PixelMath.bytes(PixelMath.clamp(value, to: 255))
    }

    /// `count * group` pixels, failing cleanly rather than trapping when the size overflows.
    private static func allocate(_ count: Int, _ group: Int) throws -> UnsafeMutablePointer<SIMD4<Float>> {
        let (pixels, o1) = count.multipliedReportingOverflow(by: group)
        let (bytes, o2) = pixels.multipliedReportingOverflow(by: MemoryLayout<SIMD4<Float>>.stride)
        guard !o1, !o2, pixels > 0 else {
            throw MagpieError.imageCreationFailed(reason: .outOfMemory(bytes: o1 || o2 ? Int.max : bytes))
        }
        return UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: pixels)
    }
}
