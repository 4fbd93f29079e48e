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

extension UInt8 {
    /// Two lowercase hex digits.
    package var hexDigits: String { lowercaseHex(CollectionOfOne(self)) }
}
