/// Why hex text does not spell bytes.
package enum HexDecodingFailure: Error, Equatable {
    /// An odd number of digits.
    case oddLength
    /// The pair starting at this offset has a character that is not a hex digit.
    case notHex(offset: Int)
}

/// The bytes that pairs of hex digits (either case) spell. The one hex reader for bytes (keys, salts).
package func bytes(fromHex text: some StringProtocol) throws(HexDecodingFailure) -> [UInt8] {
    let digits = Array(text.utf8)
    guard digits.count.isMultiple(of: 2) else { throw .oddLength }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
        guard let high = digits[index].hexDigitValue, let low = digits[index + 1].hexDigitValue else {
            throw .notHex(offset: index)
        }
        bytes.append(high << 4 | low)
        index += 2
    }
    return bytes
}

/// Lowercase hex of `bytes`, two digits per byte, written straight into the string's storage: cache file names and
/// entity tags are made on every disk read, where building a string per byte and joining them was half the read (perf).
package func lowercaseHex(_ bytes: some Collection<UInt8>) -> String {
    String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
        var index = 0
        for byte in bytes {
            buffer[index] = hexDigit(byte >> 4)
            buffer[index + 1] = hexDigit(byte & 0x0F)
            index += 2
        }
        return index
    }
}

/// The ASCII lowercase hex digit for `value` (0...15).
@inline(__always)
private func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
}

extension UInt32 {
    /// Eight lowercase hex digits, most significant first (checksums, request ids).
    package var hexDigits: String { withUnsafeBytes(of: bigEndian) { lowercaseHex($0) } }
}

extension UInt8 {
    /// Two lowercase hex digits.
    package var hexDigits: String { lowercaseHex(CollectionOfOne(self)) }

    /// The value of this ASCII hex digit (either case); nil for any other byte.
    package var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
