/// `%XX` decoding, the one in Magpie: an image server's paths, the paths the network guard compares, `data:` URLs.
package enum PercentDecoding {
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
