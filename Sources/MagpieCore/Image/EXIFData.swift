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

    /// A new EXIF payload holding only IFD0's Artist (0x013B) and Copyright (0x8298) text from `payload`, for
    /// `keep_copyright`: who owns the picture travels with it, nothing else does (no camera, no date, no location).
    /// Nil when `payload` has neither field as readable ASCII.
    static func keepingOnlyCopyright(_ payload: Data) -> Data? {
        guard let reader = IFDReader(strippingJPEGPrefix(payload)) else { return nil }
        let fields: [(tag: UInt16, value: [UInt8])] = [UInt16(0x013B), 0x8298].compactMap { tag in
            reader.asciiValue(tag: tag).map { (tag, $0) }
        }
        guard !fields.isEmpty else { return nil }
        // Little-endian TIFF: header, IFD0 (entries sorted by tag, as the list is), no next IFD, then the values
        // longer than the 4-byte field, each at an even offset.
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
        var out: [UInt8] = [0x49, 0x49, 42, 0] + le32(8) + le16(fields.count)
        var values: [UInt8] = []
        var valueOffset = 8 + 2 + fields.count * 12 + 4
        for field in fields {
            out += le16(Int(field.tag)) + le16(2) + le32(field.value.count)
            if field.value.count <= 4 {
                out += field.value + [UInt8](repeating: 0, count: 4 - field.value.count)
            } else {
                out += le32(valueOffset)
                let padded = field.value + (field.value.count % 2 == 1 ? [0] : [])
                values += padded
                valueOffset += padded.count
            }
        }
        return Data(out + le32(0) + values)
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

    /// The bytes of IFD0's ASCII (type 2) entry for `tag`, its terminating NUL included; nil when absent, of
    /// another type, empty, longer than 64 KiB or running past the end.
    func asciiValue(tag: UInt16) -> [UInt8]? {
        guard let entry = ifd0Entry(tag: tag), u16(entry + 2) == 2, let count = u32(entry + 4), (1...65_536).contains(count)
        else { return nil }
        let start = count <= 4 ? entry + 8 : u32(entry + 8)
        guard let start, start >= 0, start + count <= bytes.count else { return nil }
        return Array(bytes[start..<start + count])
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
