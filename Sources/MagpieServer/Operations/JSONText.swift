/// JSON written by hand, where the server keeps its own key order and spacing (access log lines, thumbor's
/// `/meta` answers), which `JSONEncoder` does not promise.
enum JSONText {
    /// `text` as a JSON string literal: quotes and backslashes escaped, control characters and DEL as `\n`, `\r`,
    /// `\t` or `\u00HH`, so no byte of a header or URL can end the string or the line.
    static func string(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }
}
