import Foundation
@testable import Magpie
@testable import MagpieCore

/// Deterministic images the tests generate for themselves.
enum TestImages {
    /// A smooth RGB gradient, optionally with an alpha ramp.
    static func gradient(width: Int, height: Int, alpha: Bool = false) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                bytes[i] = UInt8(x * 255 / max(1, width - 1))
                bytes[i + 1] = UInt8(y * 255 / max(1, height - 1))
                bytes[i + 2] = UInt8((x + y) * 255 / max(1, width + height - 2))
                if alpha { bytes[i + 3] = UInt8((x * 7 + y * 3) % 256) }
            }
        }
        return try PixelBuffer(width: width, height: height, rgba: bytes)
    }

    /// A photo-like baseline JPEG: a gradient under deterministic noise, so its scan is large enough (about 1 MB) for
    /// the second thread to start.
    static func noisyPhotoJPEG(width: Int = 2048, height: Int = 1536, quality: Int = 90) throws -> Data {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Int(state >> 58) - 32
                let i = (y * width + x) * 4
                bytes[i] = UInt8(clamping: x * 255 / width + noise)
                bytes[i + 1] = UInt8(clamping: y * 255 / height - noise)
                bytes[i + 2] = UInt8(clamping: (x ^ y) & 255 + noise / 2)
            }
        }
        return try JPEGCoder().encode(Image(pixels: PixelBuffer(width: width, height: height, rgba: bytes)),
                                      options: .init(quality: quality))
    }

    /// `count` copies of `data`, each with three bits flipped at pseudo-random places past its first 700 bytes (the
    /// header), the same copies for the same `seed`.
    static func bitFlipped(_ data: Data, count: Int, seed: UInt64) -> [Data] {
        var state = seed
        return (0..<count).map { _ in
            var damaged = data
            for _ in 0..<3 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let at = 700 + Int(state >> 33) % (data.count - 702)
                damaged[at] ^= UInt8(1 << Int(state >> 61))
            }
            return damaged
        }
    }

    /// Mean absolute difference per channel between two equally sized buffers.
    static func meanError(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        let x = a.rgbaBytes, y = b.rgbaBytes
        precondition(x.count == y.count)
        var total = 0
        for i in 0..<x.count { total += abs(Int(x[i]) - Int(y[i])) }
        return Double(total) / Double(x.count)
    }

    /// The decoding reason of `body`'s error, or nil when it did not throw a decoding error.
    static func decodingReason(_ body: () throws -> Any) -> MagpieError.DecodingFailureReason? {
        do {
            _ = try body()
            return nil
        } catch let error as MagpieError {
            return error.decodingReason
        } catch {
            return nil
        }
    }
}

extension MagpieError.DecodingFailureReason {
    var isTruncated: Bool { if case .truncatedData = self { true } else { false } }
    var isCorrupt: Bool { if case .corruptData = self { true } else { false } }
    var isTooLarge: Bool { if case .tooLarge = self { true } else { false } }
    var isUnsupported: Bool { if case .unsupportedFormat = self { true } else { false } }

    /// The case without its format and message: what two decodes of the same damaged data agree on when the codec
    /// words its first warning differently (libjpeg's Huffman decoder takes another path near a buffer's end).
    var kind: String {
        switch self {
        case .emptyData: "empty"
        case .unknownFormat: "unknown format"
        case .unsupportedFormat: "unsupported"
        case .corruptData: "corrupt"
        case .truncatedData: "truncated"
        case .tooLarge: "too large"
        case .outOfMemory: "out of memory"
        case .unreadableFile: "unreadable"
        }
    }
}
