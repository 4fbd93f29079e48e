import Testing
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import MagpieCore

/// The hex used in cache file names, data-URL keys, entity tags, colour specs and unknown-format errors.
struct HexTests {
    @Test func everyByteIsTwoLowercaseDigits() {
        for byte in UInt8.min...UInt8.max {
            let expected = (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: false)
            #expect(byte.hexDigits == expected)
            #expect(lowercaseHex([byte, byte]) == expected + expected)
        }
    }

    @Test func bytesKeepTheirOrderAndNothingIsAdded() {
        #expect(lowercaseHex([UInt8]()) == "")
        #expect(lowercaseHex([0x00, 0x0f, 0xa0, 0xff, 0x12]) == "000fa0ff12")
        #expect(lowercaseHex([0xde, 0xad, 0xbe, 0xef][1...]) == "adbeef")
    }

    @Test func anUnknownFormatShowsAtMostItsFirstEightBytesSpaced() {
        let long = Data([0x3c, 0x68, 0x74, 0x6d, 0x6c, 0x3e, 0x0a, 0x00, 0xff, 0xff])
        #expect(MagpieError.DecodingFailureReason.unknownFormat(leadingBytesOf: long) == .unknownFormat(leadingBytes: "3c 68 74 6d 6c 3e 0a 00"))
        #expect(MagpieError.DecodingFailureReason.unknownFormat(leadingBytesOf: Data([0x01, 0xab])) == .unknownFormat(leadingBytes: "01 ab"))
        #expect(MagpieError.DecodingFailureReason.unknownFormat(leadingBytesOf: Data()) == .unknownFormat(leadingBytes: ""))
    }
}
