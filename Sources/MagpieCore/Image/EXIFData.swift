#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Small, bounds-checked edits and questions on an EXIF (TIFF-structured) payload.
enum EXIFData {
    /// `payload` without a leading `Exif\0\0` (JPEG APP1's prefix, which some WebP and HEIF writers copy too).
    static func strippingJPEGPrefix(_ payload: Data) -> Data {
        let prefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
        return payload.starts(with: prefix) ? Data(payload.dropFirst(6)) : payload
    }

    /// True when IFD0 has a GPSInfo (0x8825) entry.
    static func hasGPS(_ payload: Data) -> Bool { ifd0Entry(payload, tag: 0x8825) != nil }

    /// A copy with IFD0's Orientation (0x0112) set to 1, for pixels that were already turned upright.
    static func resettingOrientation(_ payload: Data) -> Data {
        guard let (offset, littleEndian) = ifd0Entry(payload, tag: 0x0112) else { return payload }
        var copy = [UInt8](payload)
        // Type SHORT (3) with count 1 keeps the value in the first two bytes of the value field.
        let value = offset + 8
        guard value + 2 <= copy.count else { return payload }
        copy[value] = littleEndian ? 1 : 0
        copy[value + 1] = littleEndian ? 0 : 1
        if value + 4 <= copy.count { copy[value + 2] = 0; copy[value + 3] = 0 }
        return Data(copy)
    }

    /// The byte offset of IFD0's entry for `tag`, and the byte order; nil when absent or malformed.
    private static func ifd0Entry(_ payload: Data, tag: UInt16) -> (Int, Bool)? {
        let b = [UInt8](payload)
        guard b.count >= 8 else { return nil }
        let little: Bool
        switch (b[0], b[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= b.count else { return nil }
            return little ? Int(b[o]) | Int(b[o + 1]) << 8 : Int(b[o]) << 8 | Int(b[o + 1])
        }
        func u32(_ o: Int) -> Int? {
            guard let lo = u16(little ? o : o + 2), let hi = u16(little ? o + 2 : o) else { return nil }
            return hi << 16 | lo
        }
        guard let ifd = u32(4), let count = u16(ifd), count < 1000 else { return nil }
        for i in 0..<count {
            let entry = ifd + 2 + i * 12
            guard let t = u16(entry) else { return nil }
            if t == Int(tag) { return (entry, little) }
        }
        return nil
    }
}
