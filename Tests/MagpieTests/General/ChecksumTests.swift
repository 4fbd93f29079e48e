import CImageCodecs
import Foundation
import Testing
@testable import MagpieCore

/// Cache entries are checked with CRC-32 on every read, computed by carry-less multiplication for 64 bytes and more
/// (tables below that): the value must stay zlib's whatever the length, the alignment or where a caller splits it,
/// or every entry written before would read as corrupt.
struct ChecksumTests {
    /// Bit by bit, straight from the definition (reflected polynomial 0xEDB88320, inverted in and out).
    static func reference(_ bytes: some Sequence<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        var register = ~crc
        for byte in bytes {
            register ^= UInt32(byte)
            for _ in 0..<8 { register = register & 1 == 1 ? (register >> 1) ^ 0xEDB8_8320 : register >> 1 }
        }
        return ~register
    }

    static func pseudoRandomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    @Test func everyLengthAndAlignmentGivesZlibsValue() {
        let bytes = Self.pseudoRandomBytes(700, seed: 7)
        var mismatches: [String] = []
        for offset in 0..<16 {
            for length in 0...(bytes.count - 16) {
                let slice = Data(bytes[offset..<(offset + length)])
                if LocalFileSystem.checksum(slice) != Self.reference(slice) { mismatches.append("\(offset)+\(length)") }
            }
        }
        #expect(mismatches.isEmpty, "lengths that differ: \(mismatches.prefix(10))")
    }

    @Test func knownValuesAndLargeBuffersMatch() {
        #expect(LocalFileSystem.checksum(Data("123456789".utf8)) == 0xCBF4_3926)
        #expect(LocalFileSystem.checksum(Data()) == 0)
        #expect(LocalFileSystem.checksum(Data(repeating: 0, count: 4_096)) == Self.reference(repeatElement(0, count: 4_096)))
        let large = Self.pseudoRandomBytes(1 << 20 | 37, seed: 11)
        #expect(LocalFileSystem.checksum(Data(large)) == Self.reference(large))
    }

    @Test func aChecksumContinuedAcrossSplitsEqualsTheWholeOne() {
        let bytes = Self.pseudoRandomBytes(5_000, seed: 3)
        let whole = Self.reference(bytes)
        for split in [0, 1, 15, 16, 63, 64, 65, 1_000, 4_999, 5_000] {
            let first = bytes.withUnsafeBufferPointer { mg_crc32(0, $0.baseAddress, split) }
            let both = bytes.withUnsafeBufferPointer { mg_crc32(first, $0.baseAddress! + split, bytes.count - split) }
            #expect(both == whole, "split at \(split)")
        }
    }
}
