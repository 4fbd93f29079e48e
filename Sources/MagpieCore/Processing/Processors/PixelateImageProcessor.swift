/// Turns images into blocks of ``size`` × ``size`` pixels, each the alpha-weighted average of the pixels it covers
/// (imgproxy's `pixelate`; blocks at the right and bottom edges are as wide as the image leaves them). A size of 1 or
/// less leaves the image unchanged; one larger than the image's longer side is limited to it. Text form: `pixelate:N`.
public struct PixelateImageProcessor: ImageProcessor {
    /// The block side in pixels.
    public let size: Int

    /// A processor pixelating with blocks of `size` pixels.
    public init(size: Int) {
        self.size = size
    }

    /// `pixelate:N`.
    public var identifier: String { "pixelate:\(size)" }

    /// The pixelated image, every frame alike.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        try processImage(item, context: context) { image in
            let block = min(size, max(image.width, image.height))
            guard block > 1 else { return image }
            return try image.mapFrames { try pixelate($0, block: block) }
        }
    }

    private func pixelate(_ pixels: PixelBuffer, block: Int) throws -> PixelBuffer {
        let width = pixels.width, height = pixels.height
        var output = try PixelBuffer.uninitialized(width: width, height: height)
        pixels.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
                let src = source.bindMemory(to: UInt8.self), dst = destination.bindMemory(to: UInt8.self)
                for top in stride(from: 0, to: height, by: block) {
                    let bottom = min(height, top + block)
                    for left in stride(from: 0, to: width, by: block) {
                        let right = min(width, left + block)
                        var sum = SIMD4<Double>.zero
                        for y in top..<bottom {
                            for x in left..<right {
                                let i = (y * width + x) * 4
                                let alpha = Double(src[i + 3])
                                sum += SIMD4(Double(src[i]) * alpha, Double(src[i + 1]) * alpha, Double(src[i + 2]) * alpha, alpha)
                            }
                        }
                        let count = Double((bottom - top) * (right - left))
                        let alpha = sum.w / count
                        let colour = sum.w > 0 ? SIMD3(sum.x, sum.y, sum.z) / sum.w : .zero
                        let value: [UInt8] = [colour.x, colour.y, colour.z, alpha].map { UInt8(min(255, max(0, $0.rounded()))) }
                        for y in top..<bottom {
                            for x in left..<right {
                                let i = (y * width + x) * 4
                                dst[i] = value[0]
                                dst[i + 1] = value[1]
                                dst[i + 2] = value[2]
                                dst[i + 3] = value[3]
                            }
                        }
                    }
                }
            }
        }
        return output
    }
}
