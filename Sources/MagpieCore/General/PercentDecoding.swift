/// `%XX` decoding, the one in Magpie: an image server's paths, the paths the network guard compares, `data:` URLs;
/// and its inverse, for the URLs Magpie writes.
package enum PercentDecoding {
    /// `text` with every byte `kept` refuses written as `%XX` (uppercase hex digits, as URL encoders write them).
    package static func encoded(_ text: some StringProtocol, keeping kept: (UInt8) -> Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            guard !kept(byte) else {
                output.append(byte)
                continue
            }
            output.append(UInt8(ascii: "%"))
            output.append(uppercaseHexDigit(byte >> 4))
            output.append(uppercaseHexDigit(byte & 0x0F))
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func uppercaseHexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }

    /// `text` with every `%XX` decoded once; nil for a `%` not followed by two hex digits or for bytes that are not
    /// UTF-8.
    package static func strict(_ text: some StringProtocol) -> String? {
        decode(text, lenient: false)
    }

    /// `text` with every valid `%XX` decoded once and any other `%` kept as it is, so an option written by hand as
    /// `round:50%` and one written by a URL encoder as `round:50%25` mean the same; nil for bytes that are not UTF-8.
    package static func lenient(_ text: some StringProtocol) -> String? {
        decode(text, lenient: true)
    }

    /// The bytes of `text` with every `%XX` decoded once, whether or not they are UTF-8; nil for a `%` not followed by
    /// two hex digits.
    package static func strictBytes(_ text: some StringProtocol) -> [UInt8]? {
        decodedBytes(text, lenient: false)
    }

    /// The bytes of `text` with every valid `%XX` decoded once and any other `%` kept, whether or not they are UTF-8.
    package static func lenientBytes(_ text: some StringProtocol) -> [UInt8] {
        decodedBytes(text, lenient: true) ?? Array(text.utf8)
    }

    private static func decode(_ text: some StringProtocol, lenient: Bool) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        return decodedBytes(text, lenient: lenient).flatMap { String(validating: $0, as: UTF8.self) }
    }

    private static func decodedBytes(_ text: some StringProtocol, lenient: Bool) -> [UInt8]? {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = bytes[index + 1].hexDigitValue, let low = bytes[index + 2].hexDigitValue
            {
                output.append(high << 4 | low)
                index += 3
                continue
            }
            if byte == UInt8(ascii: "%"), !lenient { return nil }
            output.append(byte)
            index += 1
        }
        return output
    }
}
