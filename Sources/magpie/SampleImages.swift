import Foundation
import Magpie

/// One generated sample file: its name and its encoded bytes.
struct SampleFile: Sendable {
    let name: String
    let data: Data
}

/// Deterministic generated images.
enum SampleImages {
    /// A smooth colour field with soft circles and fine detail, like a photo to a codec.
    /// `variant` moves the sun and shifts the colours, so several photos differ.
    static func photo(width: Int, height: Int, variant: Int = 0) throws -> Image {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        var seed: UInt32 = 12345 &+ UInt32(truncatingIfNeeded: variant)
        let sunX = 0.6 - 0.15 * Double(variant % 4), sunY = 0.4 + 0.1 * Double(variant % 3)
        let shift = Double(variant * 37 % 90)
        for y in 0..<height {
            for x in 0..<width {
                seed = seed &* 1_103_515_245 &+ 12345
                let noise = Double(seed >> 24 & 0x0F) - 7.5
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                let dx = fx - sunX, dy = fy - sunY
                let sun = max(0, 1 - (dx * dx + dy * dy) * 8)
                let i = (y * width + x) * 4
                bytes[i] = UInt8(clamping: Int(40 + shift + (180 - shift) * fy + 60 * sun + noise))
                bytes[i + 1] = UInt8(clamping: Int(90 + 100 * (1 - fy) * fx + 80 * sun + noise))
                bytes[i + 2] = UInt8(clamping: Int(200 - 150 * fy + 20 * sin(fx * 40) + noise))
            }
        }
        return try Image(width: width, height: height, rgba: bytes)
    }

    /// A translucent disc on a transparent background.
    static func badge(size: Int, red: UInt8 = 230) throws -> Image {
        var bytes = [UInt8](repeating: 0, count: size * size * 4)
        let r = Double(size) / 2
        for y in 0..<size {
            for x in 0..<size {
                let d = ((Double(x) + 0.5 - r) * (Double(x) + 0.5 - r) + (Double(y) + 0.5 - r) * (Double(y) + 0.5 - r)).squareRoot()
                let coverage = max(0, min(1, r - d))
                let i = (y * size + x) * 4
                bytes[i] = red
                bytes[i + 1] = UInt8(80 + 120 * y / size)
                bytes[i + 2] = 40
                bytes[i + 3] = UInt8(coverage * (d < r * 0.6 ? 255 : 180))
            }
        }
        return try Image(width: size, height: size, rgba: bytes)
    }

    /// A dot circling on a transparent square, looping forever.
    static func animation(size: Int, frames count: Int) throws -> Image {
        var frames: [ImageFrame] = []
        for f in 0..<count {
            var pixels = try PixelBuffer(width: size, height: size)
            let angle = Double(f) / Double(count) * 2 * .pi
            let cx = Double(size) / 2 + cos(angle) * Double(size) / 3
            let cy = Double(size) / 2 + sin(angle) * Double(size) / 3
            for y in 0..<size {
                for x in 0..<size where (Double(x) - cx) * (Double(x) - cx) + (Double(y) - cy) * (Double(y) - cy) < 100 {
                    pixels[x, y] = RGBAColor(red: 30, green: UInt8(60 + 20 * f), blue: 220)
                }
            }
            frames.append(ImageFrame(pixels: pixels, duration: .milliseconds(80)))
        }
        return try Image(frames: frames, loopCount: 0)
    }
}

extension SampleImages {
    /// What `magpie sample` writes: a photo-like JPEG and WebP, a translucent PNG, an 8-frame
    /// animation as GIF, APNG and WebP, and a JPEG cut in half.
    static func files() throws -> [SampleFile] {
        let registry = ImageCoderRegistry.shared
        let photo = try photo(width: 1600, height: 1200)
        let animation = try animation(size: 96, frames: 8)
        let jpeg = try registry.encode(photo, as: .jpeg, options: .init(quality: 90))
        return [
            SampleFile(name: "photo.jpg", data: jpeg),
            SampleFile(name: "badge.png", data: try registry.encode(try badge(size: 256), as: .png)),
            SampleFile(name: "spinner.gif", data: try registry.encode(animation, as: .gif)),
            SampleFile(name: "spinner.png", data: try registry.encode(animation, as: .png)),
            SampleFile(name: "spinner.webp", data: try registry.encode(animation, as: .webp, options: .init(lossless: true))),
            SampleFile(name: "photo.webp", data: try registry.encode(photo, as: .webp, options: .init(quality: 80))),
            SampleFile(name: "truncated.jpg", data: jpeg.prefix(jpeg.count / 2)),
        ]
    }
}
