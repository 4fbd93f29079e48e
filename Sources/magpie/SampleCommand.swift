import ArgumentParser
import Foundation
import Magpie

/// `magpie sample DIR`: writes a small set of images that Magpie generates itself
/// (a photo-like JPEG, a translucent PNG, animated GIF/APNG/WebP, a truncated JPEG),
/// so the tool can be tried without downloading anything.
struct SampleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample", abstract: "Write a set of generated sample images into a folder.")

    @Argument(help: "Folder to write into (created if missing).")
    var directory: String

    @OptionGroup var global: GlobalOptions

    @Flag(help: "One JSON object per file: path, format, bytes.")
    var json = false

    func run() throws {
        let folder = URL(fileURLWithPath: directory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let registry = ImageCoderRegistry.shared
        let photo = try SampleImages.photo(width: 1600, height: 1200)
        let animation = try SampleImages.animation(size: 96, frames: 8)
        var files: [(String, Data)] = [
            ("photo.jpg", try registry.encode(photo, as: .jpeg, options: .init(quality: 90))),
            ("badge.png", try registry.encode(try SampleImages.badge(size: 256), as: .png)),
            ("spinner.gif", try registry.encode(animation, as: .gif)),
            ("spinner.png", try registry.encode(animation, as: .png)),
            ("spinner.webp", try registry.encode(animation, as: .webp, options: .init(lossless: true))),
            ("photo.webp", try registry.encode(photo, as: .webp, options: .init(quality: 80))),
        ]
        let jpeg = files[0].1
        files.append(("truncated.jpg", jpeg.prefix(jpeg.count / 2)))
        for (name, data) in files {
            try data.write(to: folder.appendingPathComponent(name), options: .atomic)
            let path = folder.appendingPathComponent(name).path
            print(json ? jsonLine(["path": path, "format": data.mg.imageFormat.rawValue, "bytes": data.count]) : path)
        }
    }
}

/// Deterministic generated images.
enum SampleImages {
    /// A smooth colour field with soft circles and fine detail, like a photo to a codec.
    static func photo(width: Int, height: Int) throws -> Image {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        var seed: UInt32 = 12345
        for y in 0..<height {
            for x in 0..<width {
                seed = seed &* 1_103_515_245 &+ 12345
                let noise = Double(seed >> 24 & 0x0F) - 7.5
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                let dx = fx - 0.6, dy = fy - 0.4
                let sun = max(0, 1 - (dx * dx + dy * dy) * 8)
                let i = (y * width + x) * 4
                bytes[i] = UInt8(clamping: Int(40 + 180 * fy + 60 * sun + noise))
                bytes[i + 1] = UInt8(clamping: Int(90 + 100 * (1 - fy) * fx + 80 * sun + noise))
                bytes[i + 2] = UInt8(clamping: Int(200 - 150 * fy + 20 * sin(fx * 40) + noise))
            }
        }
        return try Image(width: width, height: height, rgba: bytes)
    }

    /// A translucent disc on a transparent background.
    static func badge(size: Int) throws -> Image {
        var bytes = [UInt8](repeating: 0, count: size * size * 4)
        let r = Double(size) / 2
        for y in 0..<size {
            for x in 0..<size {
                let d = ((Double(x) + 0.5 - r) * (Double(x) + 0.5 - r) + (Double(y) + 0.5 - r) * (Double(y) + 0.5 - r)).squareRoot()
                let coverage = max(0, min(1, r - d))
                let i = (y * size + x) * 4
                bytes[i] = 230
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
