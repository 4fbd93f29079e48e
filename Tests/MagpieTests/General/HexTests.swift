import Testing
@testable import MagpieCore

/// The hex used in cache file names, data-URL keys, entity tags and colour specs.
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
}
