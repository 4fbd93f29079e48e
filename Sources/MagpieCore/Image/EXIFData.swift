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
        let stripped = strippingJPEGPrefix(payload)
        guard let reader = IFDReader(stripped), let entry = reader.ifd0Entry(tag: 0x0112), entry + 12 <= reader.bytes.count
        else { return stripped }
        var copy = reader.bytes
        // The value sits in the entry's 4-byte value field: a SHORT (or BYTE) in its first bytes, a LONG in all four.
        let width = reader.u16(entry + 2) == 4 || reader.u16(entry + 2) == 9 ? 4 : (reader.u16(entry + 2) == 3 ? 2 : 1)
        for i in 0..<4 { copy[entry + 8 + i] = 0 }
        copy[entry + 8 + (reader.littleEndian ? 0 : width - 1)] = 1
        return Data(copy)
    }

    /// The byte offset of IFD0's entry for `tag`; nil when absent or malformed.
    static func ifd0Entry(_ payload: Data, tag: UInt16) -> Int? {
        IFDReader(strippingJPEGPrefix(payload))?.ifd0Entry(tag: tag)
    }
}

/// Bounds-checked reads of a TIFF-structured payload (EXIF): the byte order from its header, 16- and 32-bit values,
/// and IFD0's entries. Every read returns nil past the end.
struct IFDReader {
    let bytes: [UInt8]
    let littleEndian: Bool

    /// Nil unless `payload` starts with a TIFF header (`II*\0` or `MM\0*`).
    init?(_ payload: Data) {
        bytes = [UInt8](payload)
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        guard u16(2) == 42 else { return nil }
    }

    func u16(_ o: Int) -> Int? {
        guard o >= 0, o + 2 <= bytes.count else { return nil }
        return littleEndian ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 : Int(bytes[o]) << 8 | Int(bytes[o + 1])
    }

    func u32(_ o: Int) -> Int? {
        guard let a = u16(o), let b = u16(o + 2) else { return nil }
        return littleEndian ? a | b << 16 : a << 16 | b
    }

    /// The offset of IFD0's 12-byte entry for `tag`.
    func ifd0Entry(tag: UInt16) -> Int? {
        guard let ifd = u32(4), let count = u16(ifd), count < 1000 else { return nil }
        for i in 0..<count {
            let entry = ifd + 2 + i * 12
            guard let t = u16(entry) else { return nil }
            if t == Int(tag) { return entry }
        }
        return nil
    }
}
