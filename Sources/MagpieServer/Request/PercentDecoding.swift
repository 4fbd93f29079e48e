/// `%XX` decoding for the parts of an image URL.
enum PercentDecoding {
    /// `text` with every `%XX` decoded once; nil for a `%` not followed by two hex digits or for bytes that are not
    /// UTF-8.
    static func strict(_ text: some StringProtocol) -> String? {
        decode(text, lenient: false)
    }

    /// `text` with every valid `%XX` decoded once and any other `%` kept as it is, so an option written by hand as
    /// `round:50%` and one written by a URL encoder as `round:50%25` mean the same; nil for bytes that are not UTF-8.
    static func lenient(_ text: some StringProtocol) -> String? {
        decode(text, lenient: true)
    }

    private static func decode(_ text: some StringProtocol, lenient: Bool) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "%")) else { return String(text) }
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
        return String(validating: output, as: UTF8.self)
    }
}

extension UInt8 {
    /// The value of this ASCII hex digit (either case); nil for any other byte.
    var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
