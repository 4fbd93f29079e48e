/// Text helpers for HTTP header values and processor specs. FoundationEssentials has no
/// `trimmingCharacters` or case-insensitive comparison, and header names and tokens are ASCII anyway.
extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and line breaks.
    package var trimmingASCIIWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }

    /// ASCII case-insensitive equality (for header names and directives).
    package func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7a)
        }
    }
}
