import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One PNG chunk: its four-letter type and its payload.
struct PNGChunk {
    var type: String
    var data: Data
}

/// Reads and writes the chunk structure of PNG files (for APNG, which libpng does not know).
enum PNGChunks {
    static let signature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

    /// The chunks up to IEND, and whether the stream was well-formed (signature, lengths
    /// inside the data, CRCs matching, IEND present). Reading stops at the first problem.
    static func read(_ data: Data) -> (chunks: [PNGChunk], complete: Bool) {
        guard data.count >= 8, data.prefix(8).elementsEqual(signature) else { return ([], false) }
        var chunks: [PNGChunk] = []
        var offset = data.startIndex + 8
        while offset + 12 <= data.endIndex {
            let length = Int(readUInt32(data, offset))
            guard length <= 0x7FFF_FFFF, length <= data.endIndex - offset - 12 else { return (chunks, false) }
            let typeRange = (offset + 4)..<(offset + 8)
            let body = (offset + 8)..<(offset + 8 + length)
            let storedCRC = readUInt32(data, offset + 8 + length)
            let crc = data[typeRange.lowerBound..<body.upperBound].withUnsafeBytes {
                mg_crc32(0, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
            }
            guard crc == storedCRC else { return (chunks, false) }
            let type = String(decoding: data[typeRange], as: UTF8.self)
            chunks.append(PNGChunk(type: type, data: data[body]))
            offset = body.upperBound + 4
            if type == "IEND" { return (chunks, true) }
        }
        return (chunks, false)
    }

    /// Whether an `acTL` chunk comes before the first IDAT, found by walking chunk headers only
    /// (no CRC pass), so still PNGs skip the APNG path at almost no cost.
    static func declaresAnimation(_ data: Data) -> Bool {
        guard data.count >= 8 else { return false }
        var offset = data.startIndex + 8
        while offset + 8 <= data.endIndex {
            let length = Int(readUInt32(data, offset))
            let type = readUInt32(data, offset + 4)
            if type == 0x6163_544C { return true }  // "acTL"
            if type == 0x4944_4154 || type == 0x4945_4E44 { return false }  // "IDAT", "IEND"
            offset += 12 + length
        }
        return false
    }

    /// Appends a chunk with its length and CRC.
    static func write(_ type: String, _ payload: Data, to output: inout Data) {
        var header = Data()
        appendUInt32(UInt32(payload.count), to: &header)
        output.append(header)
        var typed = Data(type.utf8)
        typed.append(payload)
        output.append(typed)
        let crc = typed.withUnsafeBytes { mg_crc32(0, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
        var trailer = Data()
        appendUInt32(crc, to: &trailer)
        output.append(trailer)
    }

    static func readUInt32(_ data: Data, _ offset: Int) -> UInt32 {
        UInt32(data[offset]) << 24 | UInt32(data[offset + 1]) << 16 | UInt32(data[offset + 2]) << 8
            | UInt32(data[offset + 3])
    }

    static func readUInt16(_ data: Data, _ offset: Int) -> UInt16 {
        UInt16(data[offset]) << 8 | UInt16(data[offset + 1])
    }

    static func appendUInt32(_ value: UInt32, to data: inout Data) {
        data.append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    static func appendUInt16(_ value: UInt16, to data: inout Data) {
        data.append(contentsOf: [UInt8(value >> 8), UInt8(value & 0xFF)])
    }
}
