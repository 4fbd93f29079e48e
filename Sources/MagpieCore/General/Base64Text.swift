/// Base64 (RFC 4648) as Magpie reads and writes it: one encoder and one decoder for the URL-safe text of signatures
/// and encoded source URLs, and for the base64 images of JSON payloads and HTML.
package enum Base64Text {
    /// How strictly ``decode(_:_:)`` reads.
    package struct Rules: Sendable {
        /// Whether `+` and `/` (the standard alphabet) are read.
        var standardAlphabet: Bool
        /// Whether `-` and `_` (the URL-safe alphabet) are read.
        var urlSafeAlphabet: Bool
        /// Whether ASCII whitespace (line breaks included) is skipped.
        var skipsWhitespace: Bool
        /// Whether the unused low bits of the last character must be zero, so each byte string has one spelling.
        var canonicalTail: Bool

        /// URL-safe characters only, no whitespace, unused bits zero: what a signature or an encoded URL is compared by.
        package static let urlSafe = Rules(standardAlphabet: false, urlSafeAlphabet: true, skipsWhitespace: false, canonicalTail: true)
        /// Either alphabet, whitespace skipped: base64 as people paste it.
        package static let lenient = Rules(standardAlphabet: true, urlSafeAlphabet: true, skipsWhitespace: true, canonicalTail: false)
    }

    private static let urlSafeAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in base64url without padding.
    package static func encodeURLSafe(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(urlSafeAlphabet[Int(buffer >> UInt32(bits) & 0x3F)])
            }
        }
        if bits > 0 { output.append(urlSafeAlphabet[Int(buffer << UInt32(6 - bits) & 0x3F)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of base64 `text` read by `rules`. Padding is optional but, when present, must complete the last group
    /// and end the text. Nil for a character the rules do not read, padding elsewhere, or an impossible length (a
    /// lone character in the last group, which encodes nothing).
    package static func decode(_ text: some Sequence<UInt8>, _ rules: Rules) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.underestimatedCount * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        var characters = 0
        var padding = 0
        for character in text {
            if rules.skipsWhitespace, [0x09, 0x0A, 0x0C, 0x0D, 0x20].contains(character) { continue }
            if character == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0, let value = sextet(character, rules) else { return nil }
            characters += 1
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(buffer >> UInt32(bits) & 0xFF))
            }
        }
        let remainder = characters % 4
        guard remainder != 1, padding == 0 || (remainder != 0 && remainder + padding == 4) else { return nil }
        // 2 or 4 leftover bits are the tail of the last character.
        if rules.canonicalTail, buffer & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return output
    }

    private static func sextet(_ character: UInt8, _ rules: Rules) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-") where rules.urlSafeAlphabet: 62
        case UInt8(ascii: "_") where rules.urlSafeAlphabet: 63
        case UInt8(ascii: "+") where rules.standardAlphabet: 62
        case UInt8(ascii: "/") where rules.standardAlphabet: 63
        default: nil
        }
    }
}
