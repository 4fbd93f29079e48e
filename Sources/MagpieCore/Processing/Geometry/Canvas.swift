/// Pixels placed on a new, larger or smaller canvas: what extending, padding and watermark tiling share.
enum Canvas {
    /// A `size` canvas filled with `fill`, with `pixels` copied onto it at `origin` (its top-left corner, which may be
    /// outside the canvas: what falls outside is cut).
    static func placing(_ pixels: PixelBuffer, on size: PixelSize, at origin: (x: Int, y: Int), fill: RGBAColor) throws -> PixelBuffer {
        var output = try PixelBuffer(width: size.width, height: size.height, fill: fill)
        let left = max(0, origin.x), top = max(0, origin.y)
        let right = min(size.width, origin.x + pixels.width), bottom = min(size.height, origin.y + pixels.height)
        guard left < right, top < bottom else { return output }
        let rowBytes = (right - left) * 4
        pixels.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
                for y in top..<bottom {
                    let from = source.baseAddress! + ((y - origin.y) * pixels.width + (left - origin.x)) * 4
                    let to = destination.baseAddress! + (y * size.width + left) * 4
                    to.copyMemory(from: from, byteCount: rowBytes)
                }
            }
        }
        return output
    }
}
