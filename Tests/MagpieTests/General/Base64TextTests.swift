import Testing

@testable import MagpieCore

/// The one base64 reader: URL-safe and strict for signatures and encoded URLs, lenient for pasted images.
struct Base64TextTests {
    @Test func everyByteStringRoundTripsThroughTheURLSafeSpelling() {
        var state: UInt32 = 7
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in
                state = state &* 1_103_515_245 &+ 12_345
                return UInt8(truncatingIfNeeded: state >> 16)
            }
            let text = Base64Text.encodeURLSafe(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64Text.decode(text.utf8, .urlSafe) == bytes)
            #expect(Base64Text.decode(text.utf8, .lenient) == bytes)
        }
    }

    @Test(arguments: ["aGk+", "aGk/", "aG k", "aGk=x", "a", "aGk=====", "aGl", "AAAA===="])
    func theURLSafeRulesRefuseOtherAlphabetsWhitespaceStrayPaddingAndUnusedBits(text: String) {
        #expect(Base64Text.decode(text.utf8, .urlSafe) == nil)
    }

    @Test func theLenientRulesReadBothAlphabetsAcrossLinesAndSupplyPadding() {
        #expect(Base64Text.decode("+/+/".utf8, .lenient) == [0xFB, 0xFF, 0xBF])
        #expect(Base64Text.decode("-_-_".utf8, .lenient) == [0xFB, 0xFF, 0xBF])
        #expect(Base64Text.decode("aGVs\r\nbG8 ".utf8, .lenient) == Array("hello".utf8))
        #expect(Base64Text.decode("aGVsbG8".utf8, .lenient) == Array("hello".utf8))
        #expect(Base64Text.decode("aGVsbG8=".utf8, .lenient) == Array("hello".utf8))
        #expect(Base64Text.decode("aGVsbG8==".utf8, .lenient) == nil)
        #expect(Base64Text.decode("aG=VsbG8".utf8, .lenient) == nil)
        #expect(Base64Text.decode("aGVs*bG8".utf8, .lenient) == nil)
    }
}
