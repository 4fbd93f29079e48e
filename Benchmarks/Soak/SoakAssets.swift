import Foundation
import Magpie
import MagpieOrigin

/// The bytes the soak's origin serves: valid images of several formats and sizes, and files built to hurt
/// a decoder (a decompression bomb, a corrupt JPEG, a JPEG cut short).
enum SoakAssets {
    /// Valid images by name, served under `/img/NAME` and the other asset routes.
    static let validNames = ["photo-s.jpg", "photo-m.jpg", "photo-l.jpg", "badge.png", "photo.webp", "spinner.gif", "spinner.webp"]

    /// Generates every asset (a few seconds: the largest photo is 4.3 megapixels).
    static func make() throws -> [String: OriginAsset] {
        let registry = ImageCoderRegistry.shared
        let large = try photo(width: 2400, height: 1800, seed: 3)
        let largeJPEG = try registry.encode(large, as: .jpeg, options: .init(quality: 85))
        let animation = try spinner(size: 128, frames: 12)
        var assets: [String: OriginAsset] = [
            "photo-s.jpg": OriginAsset(bytes: try registry.encode(try photo(width: 640, height: 480, seed: 1), as: .jpeg, options: .init(quality: 85)), contentType: "image/jpeg"),
            "photo-m.jpg": OriginAsset(bytes: try registry.encode(try photo(width: 1600, height: 1200, seed: 2), as: .jpeg, options: .init(quality: 85)), contentType: "image/jpeg"),
            "photo-l.jpg": OriginAsset(bytes: largeJPEG, contentType: "image/jpeg"),
            "badge.png": OriginAsset(bytes: try registry.encode(try photo(width: 512, height: 512, seed: 4, alpha: true), as: .png), contentType: "image/png"),
            "photo.webp": OriginAsset(bytes: try registry.encode(try photo(width: 1200, height: 900, seed: 5), as: .webp, options: .init(quality: 80)), contentType: "image/webp"),
            "spinner.gif": OriginAsset(bytes: try registry.encode(animation, as: .gif), contentType: "image/gif"),
            "spinner.webp": OriginAsset(bytes: try registry.encode(animation, as: .webp, options: .init(lossless: true)), contentType: "image/webp"),
        ]
        let small = try registry.encode(try photo(width: 64, height: 64, seed: 6), as: .png)
        assets["bomb.png"] = OriginAsset(bytes: try bomb(from: small, width: 50_000, height: 50_000), contentType: "image/png")
        assets["corrupt.jpg"] = OriginAsset(bytes: corrupted(largeJPEG), contentType: "image/jpeg")
        assets["cut.jpg"] = OriginAsset(bytes: largeJPEG.prefix(largeJPEG.count * 2 / 3), contentType: "image/jpeg")
        return assets
    }

    /// A gradient with a soft disc and seeded noise, so every photo compresses like a photo and differs.
    static func photo(width: Int, height: Int, seed: UInt32, alpha: Bool = false) throws -> Image {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        var state = seed &* 2_654_435_761
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 1_664_525 &+ 1_013_904_223
                let noise = Int(state >> 28) - 8
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                let disc = max(0, 1 - ((fx - 0.6) * (fx - 0.6) + (fy - 0.4) * (fy - 0.4)) * 6)
                let i = (y * width + x) * 4
                bytes[i] = UInt8(clamping: Int(60 + 150 * fy + 40 * disc) + noise)
                bytes[i + 1] = UInt8(clamping: Int(80 + 120 * fx * (1 - fy) + 60 * disc) + noise)
                bytes[i + 2] = UInt8(clamping: Int(40 + Double(seed % 5) * 30 + 20 * sin(fx * 30)) + noise)
                if alpha { bytes[i + 3] = UInt8(clamping: Int(255 * max(0.2, disc))) }
            }
        }
        return try Image(width: width, height: height, rgba: bytes)
    }

    /// A dot going round, looping forever.
    static func spinner(size: Int, frames count: Int) throws -> Image {
        var frames: [ImageFrame] = []
        for frame in 0..<count {
            var pixels = try PixelBuffer(width: size, height: size, fill: RGBAColor(red: 250, green: 250, blue: 250))
            let angle = Double(frame) / Double(count) * 2 * .pi
            let cx = Double(size) / 2 + cos(angle) * Double(size) / 3, cy = Double(size) / 2 + sin(angle) * Double(size) / 3
            for y in 0..<size {
                for x in 0..<size where (Double(x) - cx) * (Double(x) - cx) + (Double(y) - cy) * (Double(y) - cy) < 120 {
                    pixels[x, y] = RGBAColor(red: 20, green: UInt8(40 + 15 * frame), blue: 200)
                }
            }
            frames.append(ImageFrame(pixels: pixels, duration: .milliseconds(60)))
        }
        return try Image(frames: frames, loopCount: 0)
    }

    /// A valid small PNG whose header now declares `width`×`height` (its CRC fixed, so only the size is
    /// wrong): a decoder that believes it before checking limits allocates gigabytes.
    static func bomb(from png: Data, width: UInt32, height: UInt32) throws -> Data {
        var bytes = [UInt8](png)
        // Signature (8), IHDR length (4), "IHDR" (4), then width and height, then 5 more bytes and the CRC.
        guard bytes.count > 33, Array(bytes[12..<16]) == Array("IHDR".utf8) else { throw SoakError("the PNG encoder wrote no IHDR first") }
        for (offset, value) in [(16, width), (20, height)] {
            for shift in 0..<4 { bytes[offset + shift] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(shift))) }
        }
        let crc = CRC32.checksum(bytes[12..<29])
        for shift in 0..<4 { bytes[29 + shift] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * UInt32(shift))) }
        return Data(bytes)
    }

    /// The JPEG with a run of bytes in the middle of its entropy-coded data replaced by a marker that has no
    /// business there: libjpeg reports corrupt data (Magpie turns its warnings into errors).
    static func corrupted(_ jpeg: Data) -> Data {
        var bytes = [UInt8](jpeg)
        let middle = bytes.count / 2
        for offset in 0..<64 { bytes[middle + offset] = offset.isMultiple(of: 2) ? 0xFF : 0xD3 }
        return Data(bytes)
    }
}

/// CRC-32 (the PNG/zlib polynomial), for patching a chunk.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

/// A failure of the soak itself (not of what it tests), with one line saying why.
struct SoakError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
