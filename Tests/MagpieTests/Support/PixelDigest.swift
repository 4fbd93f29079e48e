import Crypto
import Foundation
@testable import Magpie
@testable import MagpieCore

/// The corpus README's pixel digests: SHA-256 of normalised RGBA and the 8x8 area-average grid.
enum PixelDigest {
    /// RGBA with every fully transparent pixel set to 0,0,0,0.
    static func normalized(_ pixels: PixelBuffer) -> [UInt8] {
        var bytes = pixels.rgbaBytes
        var i = 0
        while i < bytes.count {
            if bytes[i + 3] == 0 { bytes[i] = 0; bytes[i + 1] = 0; bytes[i + 2] = 0 }
            i += 4
        }
        return bytes
    }

    static func sha256(_ pixels: PixelBuffer) -> String {
        SHA256.hash(data: normalized(pixels)).map { String(format: "%02x", $0) }.joined()
    }

    /// 64 cells x 4 channels, exact area averaging, rounded half up (integer arithmetic).
    static func grid8(_ pixels: PixelBuffer) -> [Int] {
        let w = pixels.width, h = pixels.height
        let bytes = normalized(pixels)
        var result = [Int](repeating: 0, count: 256)
        // Sums per cell; weights wx*wy as in the README's formula.
        var sums = [Int](repeating: 0, count: 256)
        for y in 0..<h {
            for i in 0..<8 {
                let wy = max(0, min((i + 1) * h, 8 * y + 8) - max(i * h, 8 * y))
                if wy == 0 { continue }
                for x in 0..<w {
                    for j in 0..<8 {
                        let wx = max(0, min((j + 1) * w, 8 * x + 8) - max(j * w, 8 * x))
                        if wx == 0 { continue }
                        let p = (y * w + x) * 4, cell = (i * 8 + j) * 4
                        for c in 0..<4 { sums[cell + c] += wy * wx * Int(bytes[p + c]) }
                    }
                }
            }
        }
        for k in 0..<256 { result[k] = (2 * sums[k] + w * h) / (2 * w * h) }
        return result
    }

    static func parseGrid(_ hex: String) -> [Int] {
        var values: [Int] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            values.append(Int(hex[index..<next], radix: 16) ?? -1)
            index = next
        }
        return values
    }
}
