#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A TIFF file's EXIF as a stand-alone payload, the form JPEG APP1, PNG eXIf and WebP EXIF carry.
///
/// In a TIFF the EXIF and GPS IFDs hang off the image's own IFD0, whose other entries describe strips and tiles. The
/// payload keeps IFD0's descriptive entries (make, model, orientation, dates, …), the EXIF IFD and the GPS IFD, each
/// value copied with its offset moved; the source byte order is kept, so values are copied as they are.
enum TIFFEXIFPayload {
    /// IFD0 entries worth carrying: the ones that describe the picture rather than its storage.
    private static let descriptiveTags: Set<Int> = [
        0x010E, 0x010F, 0x0110, 0x0112, 0x011A, 0x011B, 0x0128, 0x0131, 0x0132, 0x013B, 0x8298,
    ]
    private static let exifPointer = 0x8769, gpsPointer = 0x8825, interoperabilityPointer = 0xA005
    /// Entries per IFD and bytes per value beyond which the IFD is treated as damaged or hostile.
    private static let maximumEntries = 1000, maximumValueBytes = 1 << 16

    /// The payload, or nil when the file has neither an EXIF nor a GPS IFD (or is a BigTIFF, or damaged there).
    static func payload(fromTIFF data: Data) -> Data? {
        // IFDReader copies the file: look at IFD0 in place first (most TIFFs, scans and exports, carry no EXIF).
        guard pointsToEXIF(data), let reader = IFDReader(data), let ifd0 = reader.u32(4),
            let entries = entries(of: ifd0, in: reader)
        else { return nil }
        let pointers = Dictionary(
            entries.filter { $0.tag == exifPointer || $0.tag == gpsPointer }.map { ($0.tag, $0) },
            uniquingKeysWith: { first, _ in first })
        var subIFDs: [Int: [Entry]] = [:]
        for (tag, entry) in pointers {
            guard entry.type == 4 || entry.type == 13, entry.count == 1, let offset = reader.u32(entry.field),
                let sub = Self.entries(of: offset, in: reader)
            else { continue }
            subIFDs[tag] = sub.filter { $0.tag != interoperabilityPointer }
        }
        guard !subIFDs.isEmpty else { return nil }

        var writer = Writer(littleEndian: reader.littleEndian)
        writer.bytes = Array(reader.bytes[0..<4])
        writer.append32(8)
        let kept = entries.filter { descriptiveTags.contains($0.tag) || subIFDs[$0.tag] != nil }
        let pointerFields = writer.writeIFD(kept, from: reader)
        for (tag, field) in pointerFields.sorted(by: { $0.key < $1.key }) {
            guard let sub = subIFDs[tag] else { continue }
            writer.patch32(at: field, writer.bytes.count)
            _ = writer.writeIFD(sub, from: reader)
        }
        return Data(writer.bytes)
    }

    /// True when the IFD0 of a classic TIFF has an EXIF or GPS pointer entry, read without copying the file.
    private static func pointsToEXIF(_ data: Data) -> Bool {
        guard data.count >= 8 else { return false }
        let little = data[data.startIndex] == 0x49
        func value(_ offset: Int, _ width: Int) -> Int? {
            guard offset >= 0, offset + width <= data.count else { return nil }
            let start = data.startIndex + offset
            return (0..<width).reduce(0) { sum, i in
                sum | Int(data[start + i]) << (8 * (little ? i : width - 1 - i))
            }
        }
        guard value(2, 2) == 42, let ifd0 = value(4, 4), let count = value(ifd0, 2), count <= maximumEntries else {
            return false
        }
        return (0..<count).contains { i in
            let tag = value(ifd0 + 2 + i * 12, 2)
            return tag == exifPointer || tag == gpsPointer
        }
    }

    private struct Entry {
        var tag: Int
        var type: Int
        var count: Int
        /// Offset of the entry's 4-byte value field in the source.
        var field: Int
    }

    private static func entries(of ifd: Int, in reader: IFDReader) -> [Entry]? {
        guard let count = reader.u16(ifd), count <= maximumEntries else { return nil }
        var entries: [Entry] = []
        for i in 0..<count {
            let at = ifd + 2 + i * 12
            guard let tag = reader.u16(at), let type = reader.u16(at + 2), let n = reader.u32(at + 4),
                reader.u32(at + 8) != nil
            else { return nil }
            entries.append(Entry(tag: tag, type: type, count: n, field: at + 8))
        }
        return entries
    }

    /// Bytes per value of a TIFF field type; nil for types this copier does not know.
    private static func size(of type: Int) -> Int? {
        switch type {
        case 1, 2, 6, 7: 1
        case 3, 8: 2
        case 4, 9, 11, 13: 4
        case 5, 10, 12: 8
        default: nil
        }
    }

    private struct Writer {
        let littleEndian: Bool
        var bytes: [UInt8] = []

        mutating func append16(_ v: Int) {
            let b = [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)]
            bytes += littleEndian ? b : b.reversed()
        }

        mutating func append32(_ v: Int) {
            let b = (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) }
            bytes += littleEndian ? b : b.reversed()
        }

        mutating func patch32(at offset: Int, _ v: Int) {
            for i in 0..<4 {
                let byte = UInt8(truncatingIfNeeded: v >> (i * 8))
                bytes[offset + (littleEndian ? i : 3 - i)] = byte
            }
        }

        /// Writes an IFD of the copiable `entries` (unknown types and unreadable or oversized values are dropped)
        /// followed by their out-of-line values; returns where the value fields of pointer entries were written, by tag.
        mutating func writeIFD(_ entries: [Entry], from reader: IFDReader) -> [Int: Int] {
            let copiable: [(Entry, length: Int)] = entries.compactMap { entry in
                guard let unit = TIFFEXIFPayload.size(of: entry.type) else { return nil }
                let (length, overflow) = unit.multipliedReportingOverflow(by: entry.count)
                guard !overflow, length <= TIFFEXIFPayload.maximumValueBytes else { return nil }
                if length > 4 {
                    guard let offset = reader.u32(entry.field), offset + length <= reader.bytes.count else { return nil }
                }
                return (entry, length)
            }
            let start = bytes.count
            var data = start + 2 + copiable.count * 12 + 4
            var pointerFields: [Int: Int] = [:]
            append16(copiable.count)
            var outOfLine: [UInt8] = []
            for (entry, length) in copiable {
                append16(entry.tag)
                append16(entry.type)
                append32(entry.count)
                if entry.tag == TIFFEXIFPayload.exifPointer || entry.tag == TIFFEXIFPayload.gpsPointer {
                    pointerFields[entry.tag] = bytes.count
                    append32(0)
                } else if length <= 4 {
                    bytes += reader.bytes[entry.field..<entry.field + 4]
                } else {
                    let offset = reader.u32(entry.field)!
                    append32(data)
                    outOfLine += reader.bytes[offset..<offset + length]
                    // Values start on a word boundary, as TIFF asks.
                    if length % 2 == 1 { outOfLine.append(0) }
                    data = start + 2 + copiable.count * 12 + 4 + outOfLine.count
                }
            }
            append32(0)
            bytes += outOfLine
            return pointerFields
        }
    }
}
