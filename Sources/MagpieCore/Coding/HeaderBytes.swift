#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Bounds-checked reads over a file's bytes, and the header walks of the formats whose headers are read here rather
/// than by their C library (PNG, GIF, WebP). Every read returns nil past the end, so a truncated header gives nil
/// rather than a trap.
struct HeaderBytes {
    /// The header `walk` finds in `data`, checked: a walk that ends early is `truncatedData`, a zero side `corruptData`.
    static func read(_ data: Data, format: ImageFormat, walk: (HeaderBytes) -> ImageHeader?) throws -> ImageHeader {
        guard let parsed = data.withUnsafeBytes({ walk(HeaderBytes($0)) }) else {
            throw MagpieError.decodingFailed(reason: .truncatedData(format, message: "the header is cut short or malformed"))
        }
        guard parsed.width > 0, parsed.height > 0 else {
            let message = "the header declares a \(parsed.width)x\(parsed.height) image"
            throw MagpieError.decodingFailed(reason: .corruptData(format, message: message))
        }
        return parsed
    }

    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func byte(_ at: Int) -> Int? { at >= 0 && at < bytes.count ? Int(bytes[at]) : nil }

    func bigEndian32(_ at: Int) -> Int? {
        guard let a = byte(at), let b = byte(at + 1), let c = byte(at + 2), let d = byte(at + 3) else { return nil }
        return a << 24 | b << 16 | c << 8 | d
    }

    func littleEndian(_ at: Int, count: Int) -> Int? {
        var value = 0
        for index in (0..<count).reversed() {
            guard let b = byte(at + index) else { return nil }
            value = value << 8 | b
        }
        return value
    }

    func tag(_ at: Int) -> String? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        return String(decoding: bytes[at..<at + 4], as: UTF8.self)
    }

    /// IHDR for the size; an `acTL` before the first IDAT for the frame count (1 without one).
    func png() -> ImageHeader? {
        guard tag(12) == "IHDR", let width = bigEndian32(16), let height = bigEndian32(20) else { return nil }
        var frames: Int?
        var offset = 8
        while let length = bigEndian32(offset), let type = tag(offset + 4) {
            if type == "acTL" { frames = bigEndian32(offset + 8) }
            if type == "acTL" || type == "IDAT" {
                frames = frames ?? 1
                break
            }
            offset += 12 + length
        }
        return ImageHeader(format: .png, width: width, height: height, frameCount: frames)
    }

    /// The logical screen for the size; the image descriptors, found by skipping every block, for the frame count.
    func gif() -> ImageHeader? {
        guard let width = littleEndian(6, count: 2), let height = littleEndian(8, count: 2), let flags = byte(10)
        else { return nil }
        var offset = 13 + (flags & 0x80 != 0 ? 3 << ((flags & 7) + 1) : 0)
        var images = 0
        var frames: Int?
        // A sequence of sub-blocks, each a length byte and that many bytes, ends with a zero length.
        func skipSubBlocks(from start: Int) -> Int? {
            var at = start
            while let length = byte(at) {
                at += 1 + length
                if length == 0 { return at }
            }
            return nil
        }
        walk: while let introducer = byte(offset) {
            switch introducer {
            case 0x21:
                guard let next = skipSubBlocks(from: offset + 2) else { break walk }
                offset = next
            case 0x2C:
                guard let local = byte(offset + 9) else { break walk }
                images += 1
                // Descriptor (10 bytes), local colour table, LZW minimum code size, then the data sub-blocks.
                let table = local & 0x80 != 0 ? 3 << ((local & 7) + 1) : 0
                guard let next = skipSubBlocks(from: offset + 10 + table + 1) else { break walk }
                offset = next
            case 0x3B:
                frames = images
                break walk
            default:
                break walk
            }
        }
        return ImageHeader(format: .gif, width: width, height: height, frameCount: frames)
    }

    /// The first chunk (VP8, VP8L or VP8X) for the size; ANMF chunks for an animation's frame count.
    func webp() -> ImageHeader? {
        guard tag(0) == "RIFF", tag(8) == "WEBP", let first = tag(12) else { return nil }
        let data = 20
        switch first {
        case "VP8 ":
            guard byte(data + 3) == 0x9D, byte(data + 4) == 0x01, byte(data + 5) == 0x2A,
                let width = littleEndian(data + 6, count: 2), let height = littleEndian(data + 8, count: 2)
            else { return nil }
            return ImageHeader(format: .webp, width: width & 0x3FFF, height: height & 0x3FFF, frameCount: 1)
        case "VP8L":
            guard byte(data) == 0x2F, let bits = littleEndian(data + 1, count: 4) else { return nil }
            return ImageHeader(format: .webp, width: (bits & 0x3FFF) + 1, height: (bits >> 14 & 0x3FFF) + 1, frameCount: 1)
        case "VP8X":
            guard let flags = byte(data), let width = littleEndian(data + 4, count: 3),
                let height = littleEndian(data + 7, count: 3)
            else { return nil }
            var frames: Int? = 1
            if flags & 0x02 != 0 {
                // Chunks are padded to an even size; the count is known only if the walk reaches the end.
                var count = 0
                var offset = 12
                frames = nil
                while let type = tag(offset), let size = littleEndian(offset + 4, count: 4) {
                    if type == "ANMF" { count += 1 }
                    offset += 8 + size + (size & 1)
                    if offset >= bytes.count {
                        frames = offset == bytes.count || offset == bytes.count + 1 ? count : nil
                        break
                    }
                }
            }
            return ImageHeader(format: .webp, width: width + 1, height: height + 1, frameCount: frames)
        default:
            return nil
        }
    }
}
