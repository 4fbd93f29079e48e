/// Per-pixel helpers shared by the colour processors: straight RGBA8 in, a transform on
/// floats in 0...1, straight RGBA8 out.
enum PixelMath {
    /// Rec. 709 luma weights (R, G, B, 0), applied to the stored (gamma-encoded) values.
    @inline(__always) static var luma709: SIMD4<Float> { SIMD4(0.2126, 0.7152, 0.0722, 0) }

    /// `color` as straight RGBA floats in 0...1.
    static func unit(_ color: RGBAColor) -> SIMD4<Float> {
        SIMD4(Float(color.red), Float(color.green), Float(color.blue), Float(color.alpha)) / 255
    }

    /// A copy of `pixels` with every pixel replaced by `transform` of it, both straight RGBA in
    /// 0...1. Results are clamped to 0...1 and rounded to the nearest 8-bit value.
    ///
    /// Generic rather than taking a closure: specialisation reliably inlines the transform
    /// into the loop, where a closure was left as a call per pixel.
    static func map<T: PixelTransform>(_ pixels: PixelBuffer, _ transform: T) throws -> PixelBuffer {
        var output = try PixelBuffer.uninitialized(width: pixels.width, height: pixels.height)
        let count = pixels.width * pixels.height
        pixels.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
                let src = source.baseAddress!, dst = destination.baseAddress!
                for i in 0..<count {
                    let bytes = src.loadUnaligned(fromByteOffset: i * 4, as: SIMD4<UInt8>.self)
                    let value = transform(floats(bytes) * (1 / 255))
                    dst.storeBytes(of: quantize(value), toByteOffset: i * 4, as: SIMD4<UInt8>.self)
                }
            }
        }
        return output
    }

    /// `value` (0...1, clamped) as rounded 8-bit channels.
    @inline(__always)
    static func quantize(_ value: SIMD4<Float>) -> SIMD4<UInt8> {
        bytes(clamp(value * 255, to: 255))
    }

    // The stdlib's clamped, pointwiseMin and pointwiseMax go lane by lane through NaN-aware
    // generic code (several times slower here); compare-and-replace vectorises.

    /// `value` with every lane limited to 0...`upper`.
    @inline(__always)
    static func clamp(_ value: SIMD4<Float>, to upper: Float) -> SIMD4<Float> {
        value.replacing(with: 0, where: value .< 0).replacing(with: upper, where: value .> upper)
    }

    /// The smaller of `a` and `b`, lane by lane.
    @inline(__always)
    static func minimum(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> { a.replacing(with: b, where: b .< a) }

    /// The larger of `a` and `b`, lane by lane.
    @inline(__always)
    static func maximum(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> { a.replacing(with: b, where: b .> a) }

    // The stdlib's SIMD float/integer conversions are generic and run lane by lane through
    // slow paths; these go through the float's bit pattern instead. 2^23 + n has n in its low
    // mantissa bits, for any whole n below 2^23.

    /// Channels as floats 0...255.
    @inline(__always)
    static func floats(_ bytes: SIMD4<UInt8>) -> SIMD4<Float> {
        unsafeBitCast(SIMD4<UInt32>(truncatingIfNeeded: bytes) | 0x4B00_0000, to: SIMD4<Float>.self) - 8_388_608
    }

    /// Floats already within 0...255, rounded to the nearest integer (ties to even).
    @inline(__always)
    static func bytes(_ value: SIMD4<Float>) -> SIMD4<UInt8> {
        SIMD4<UInt8>(truncatingIfNeeded: unsafeBitCast(value + 8_388_608, to: SIMD4<UInt32>.self))
    }
}

/// A per-pixel function for `PixelMath.map`: straight RGBA in 0...1 in and out.
protocol PixelTransform {
    func callAsFunction(_ pixel: SIMD4<Float>) -> SIMD4<Float>
}
