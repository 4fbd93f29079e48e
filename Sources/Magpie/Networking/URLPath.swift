/// Dot segments in URL paths, for checks that compare a path with an allowed prefix: `/img/../secret.jpg` starts
/// with `/img/` but names a file outside it once the origin resolves the `..`.
public enum URLPath {
    /// `path` (percent-encoded, as sent) with its `.` and `..` segments resolved as RFC 3986 §5.2.4 does, where a
    /// segment counts as a dot segment also when its dots are written `%2e` (percent-encoded unreserved characters are
    /// the characters themselves, §6.2.2.2). Other escapes are kept as they are, so `%2f` stays part of its segment.
    ///
    /// `/img/sub/../a.jpg` → `/img/a.jpg`; `/img/%2e%2e/a.jpg` → `/a.jpg`; `/img/..` → `/`.
    public static func removingDotSegments(_ path: String) -> String {
        guard path.contains(".") || path.contains("%") else { return path }
        let absolute = path.hasPrefix("/")
        let segments = (absolute ? path.dropFirst() : path[...]).split(separator: "/", omittingEmptySubsequences: false)
        var output: [Substring] = []
        var endsInFolder = false
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch dotSegment(segment) {
            case 1:
                endsInFolder = isLast
            case 2:
                if !output.isEmpty { output.removeLast() }
                endsInFolder = isLast
            default:
                output.append(segment)
            }
        }
        let joined = output.joined(separator: "/")
        return (absolute ? "/" : "") + joined + (endsInFolder && !output.isEmpty ? "/" : "")
    }

    /// Whether some segment of `path` (percent-encoded) is, or hides, a `.` or `..` segment: spelled out, with its dots
    /// written `%2e`, or behind an encoded separator (`..%2f`, `..%5c`, `..\`) that an origin may decode before it
    /// resolves the path. A path from ``removingDotSegments(_:)`` can only still have the hidden kind.
    public static func hasDotSegment(_ path: String) -> Bool {
        guard path.contains(".") || path.contains("%") else { return false }
        for segment in path.split(separator: "/") {
            // Only `.`, `/` and `\` matter, and they are ASCII bytes whatever the rest decodes to.
            let pieces = PercentDecoding.lenientBytes(segment).split(omittingEmptySubsequences: false) {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\")
            }
            if pieces.contains(where: { $0.count <= 2 && !$0.isEmpty && $0.allSatisfy { $0 == UInt8(ascii: ".") } }) { return true }
        }
        return false
    }

    /// 1 for a `.` segment, 2 for `..`, 0 otherwise; a dot may be written `%2e` or `%2E`.
    private static func dotSegment(_ segment: Substring) -> Int {
        var dots = 0
        var rest = segment.utf8[...]
        while let first = rest.first {
            if first == UInt8(ascii: ".") {
                rest = rest.dropFirst()
            } else if first == UInt8(ascii: "%"), rest.count >= 3,
                rest.dropFirst().first == UInt8(ascii: "2"), rest.dropFirst(2).first.map({ $0 | 0x20 }) == UInt8(ascii: "e")
            {
                rest = rest.dropFirst(3)
            } else {
                return 0
            }
            dots += 1
            if dots > 2 { return 0 }
        }
        return dots
    }
}
