/// A convolution with a small kernel (thumbor's `convolution`): each output pixel is the sum of its neighbours times
/// the kernel's weights (pixels beyond the edges repeat the edge pixel), truncated toward zero and clamped to 0...255.
/// With ``normalize`` the weights are divided by their sum first (unless it is 0). Alpha is convolved too when the
/// image has any translucent pixel, and kept otherwise (an opaque image stays opaque, as thumbor's RGB images do).
/// Text form: `convolve:COLUMNS:NORMALIZE:W;W;…`, for example `convolve:3:1:1;2;1;2;4;2;1;2;1`.
public struct ConvolutionProcessor: ImageProcessor {
    /// The weights, row by row.
    public let kernel: [Double]
    /// The kernel's width; its height is `kernel.count / columns`. Both must be odd.
    public let columns: Int
    /// Whether the weights are divided by their sum.
    public let normalize: Bool

    /// A processor convolving with `kernel` (checked when processing).
    ///
    /// - Parameters:
    ///   - kernel: The weights, row by row: `columns` × an odd number of rows.
    ///   - columns: The kernel's width, odd.
    ///   - normalize: Divide the weights by their sum (when it is not 0).
    public init(kernel: [Double], columns: Int, normalize: Bool = true) {
        self.kernel = kernel
        self.columns = columns
        self.normalize = normalize
    }

    /// The text form, `convolve:COLUMNS:NORMALIZE:W;W;…`.
    public var identifier: String {
        "convolve:\(columns):\(normalize ? 1 : 0):" + kernel.map { DecimalText.format($0) }.joined(separator: ";")
    }

    /// What is wrong with the kernel, nil when it is usable.
    var problem: String? {
        guard columns > 0, !kernel.isEmpty, kernel.count % columns == 0 else { return "the kernel must have a whole number of rows" }
        guard columns % 2 == 1, (kernel.count / columns) % 2 == 1 else { return "the kernel's width and height must be odd" }
        guard kernel.count <= 49 * 49 else { return "the kernel is larger than 49 × 49" }
        guard kernel.allSatisfy(\.isFinite) else { return "the weights must be finite numbers" }
        return nil
    }

    /// The convolved image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)`` for a kernel that is not
    ///   odd × odd, larger than 49 × 49 or not finite; `.cancelled` when the context is cancelled between rows;
    ///   ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        if let problem {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: problem))
        }
        let sum = kernel.reduce(0, +)
        let weights = normalize && sum != 0 ? kernel.map { $0 / sum } : kernel
        return try processImage(item, context: context) { image in
            try image.mapFrames { try convolve($0, weights: weights, context: context) }
        }
    }

    private func convolve(_ pixels: PixelBuffer, weights: [Double], context: ImageProcessingContext) throws -> PixelBuffer {
        let width = pixels.width, height = pixels.height
        let rows = weights.count / columns, midX = columns / 2, midY = rows / 2
        let channels = pixels.isOpaque ? 3 : 4
        var output = pixels
        try pixels.withUnsafeBytes { source in
            try output.withUnsafeMutableBytes { destination in
                for y in 0..<height {
                    try context.checkCancellation()
                    for x in 0..<width {
                        var sums = SIMD4<Double>()
                        for ky in 0..<rows {
                            let row = min(max(y + ky - midY, 0), height - 1) * width
                            for kx in 0..<columns {
                                let weight = weights[ky * columns + kx]
                                let at = (row + min(max(x + kx - midX, 0), width - 1)) * 4
                                sums += SIMD4(Double(source[at]), Double(source[at + 1]), Double(source[at + 2]), Double(source[at + 3])) * weight
                            }
                        }
                        let at = (y * width + x) * 4
                        for channel in 0..<channels {
                            destination[at + channel] = UInt8(min(max(Int(sums[channel]), 0), 255))
                        }
                    }
                }
            }
        }
        return output
    }
}
