#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The metadata segments of a JPEG header (before the first scan): EXIF and XMP in APP1, the ICC profile in APP2
/// (possibly split over several segments, joined by their sequence numbers), and writing them back.
enum JPEGSegments {
    /// The EXIF, XMP and ICC profile of a JPEG; empty for data that is not a well-formed JPEG header.
    static func read(_ data: Data) -> EmbeddedMetadata {
        var exif: Data?, xmp: Data?
        var iccParts: [Int: Data] = [:]
        var iccCounts: Set<Int> = []
        data.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            _ = walk(b) { marker, range in
                let payload = UnsafeBufferPointer(rebasing: b[range])
                if marker == 0xE1 {
                    if exif == nil, payload.starts(with: EmbeddedMetadata.exifPrefix) {
                        exif = Data(payload.dropFirst(6))
                    } else if xmp == nil, payload.starts(with: EmbeddedMetadata.xmpJPEGNamespace) {
                        xmp = Data(payload.dropFirst(EmbeddedMetadata.xmpJPEGNamespace.count))
                    }
                } else if marker == 0xE2, payload.count > 14, payload.starts(with: Array("ICC_PROFILE\0".utf8)) {
                    let sequence = Int(payload[12])
                    iccCounts.insert(Int(payload[13]))
                    if iccParts[sequence] == nil { iccParts[sequence] = Data(payload.dropFirst(14)) }
                }
            }
        }
        var icc: Data?
        if !iccParts.isEmpty {
            // Segments are numbered 1...count and each announces that count: a profile with a part missing, or
            // whose parts disagree on how many there are, is not used (as Pillow and libjpeg-turbo decide).
            let numbers = iccParts.keys.sorted()
            if numbers == Array(1...numbers.count), iccCounts == [numbers.count] {
                icc = numbers.reduce(into: Data()) { $0.append(iccParts[$1]!) }
            }
        }
        return EmbeddedMetadata(
            colorProfile: icc.map { ColorProfile(iccData: $0) }, metadata: ImageMetadata(exif: exif, xmp: xmp))
    }

    /// How far a JPEG's header goes: every segment up to and including the first scan's (SOS) header.
    enum HeaderExtent: Equatable {
        /// The header is the first `count` bytes.
        case complete(count: Int)
        /// The data ends inside the header; the walk needs at least `count` bytes to go on.
        case needsBytes(count: Int)
        /// Not a JPEG header that reaches a scan (no SOI, a byte where a marker should be, EOI first).
        case malformed
    }

    /// Where the header of `data` (the start of a JPEG file) ends.
    static func headerExtent(of data: Data) -> HeaderExtent {
        data.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            guard b.count >= 2 else { return .needsBytes(count: 2) }
            guard b[0] == 0xFF, b[1] == 0xD8 else { return .malformed }
            return walk(b) { _, _ in }
        }
    }

    /// Walks the segments after SOI up to the first scan's header, giving `visit` each segment's marker and the range
    /// of its payload in `b`; returns where the walk ended (a segment cut short ends it as `needsBytes`).
    private static func walk(_ b: UnsafeBufferPointer<UInt8>, _ visit: (UInt8, Range<Int>) -> Void) -> HeaderExtent {
        var i = 2
        while true {
            guard i + 4 <= b.count else { return .needsBytes(count: i + 4) }
            guard b[i] == 0xFF else { return .malformed }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            if marker == 0xD9 { return .malformed }  // EOI before any scan
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard length >= 2 else { return .malformed }
            let end = i + 2 + length
            guard end <= b.count else { return .needsBytes(count: end) }
            if marker == 0xDA { return .complete(count: end) }  // image data starts
            visit(marker, (i + 4)..<end)
            i = end
        }
    }

    /// `jpeg` with APP2 ICC segments, and APP1 EXIF and XMP segments, inserted after SOI and any APP0 (JFIF).
    /// A payload too large for APP1 (64 KB) is left out rather than written broken.
    static func inserting(icc: Data?, exif: Data?, xmp: Data?, into jpeg: Data) -> Data {
        var segments = Data()
        if let exif, exif.count + 8 <= 0xFFFF {
            append(marker: 0xE1, payload: Data(EmbeddedMetadata.exifPrefix) + exif, to: &segments)
        }
        if let xmp, xmp.count + EmbeddedMetadata.xmpJPEGNamespace.count + 2 <= 0xFFFF {
            append(marker: 0xE1, payload: Data(EmbeddedMetadata.xmpJPEGNamespace) + xmp, to: &segments)
        }
        if let icc, !icc.isEmpty {
            let chunk = 0xFFFF - 2 - 14
            let count = (icc.count + chunk - 1) / chunk
            if count <= 255 {
                for index in 0..<count {
                    let part = icc[(icc.startIndex + index * chunk)..<(icc.startIndex + min(icc.count, (index + 1) * chunk))]
                    var payload = Data("ICC_PROFILE\0".utf8)
                    payload.append(contentsOf: [UInt8(index + 1), UInt8(count)])
                    payload.append(part)
                    append(marker: 0xE2, payload: payload, to: &segments)
                }
            }
        }
        guard !segments.isEmpty, jpeg.count > 4 else { return jpeg }
        var insertAt = jpeg.startIndex + 2
        // Keep JFIF's APP0 first, as its specification asks.
        if jpeg[insertAt] == 0xFF, jpeg[insertAt + 1] == 0xE0, insertAt + 4 <= jpeg.endIndex {
            insertAt += 2 + (Int(jpeg[insertAt + 2]) << 8 | Int(jpeg[insertAt + 3]))
        }
        var output = Data(jpeg[..<insertAt])
        output.append(segments)
        output.append(jpeg[insertAt...])
        return output
    }

    private static func append(marker: UInt8, payload: Data, to output: inout Data) {
        let length = payload.count + 2
        output.append(contentsOf: [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)])
        output.append(payload)
    }
}
