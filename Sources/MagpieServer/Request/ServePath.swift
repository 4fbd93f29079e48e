import Magpie

/// An image URL path taken apart, before its signature is checked or its options are interpreted.
///
/// The shape is imgproxy's:
/// - `/{signature}/{option}/…/plain/{percent-encoded source URL}[@{extension}]`, or
/// - `/{signature}/{option}/…/{base64url source URL}[.{extension}]`, where the base64url text may be split over
///   several segments with `/` and its `=` padding is optional.
///
/// Option segments always contain `:` (an option without arguments is written `gray:`; a `%3A` counts, as imgproxy
/// takes colons a CDN escaped); the first segment without `:` starts the source, and one empty segment before a base64
/// source is skipped (some imgproxy clients write `//` there). The path is the raw one, still percent-encoded, without the query string: the HTTP layer
/// removes `?…` before parsing, so a query is never signed and a `?` in a plain source URL must be written `%3F`.
public struct ServePath: Sendable, Equatable {
    /// The first segment, as received (`_` or `insecure` for unsigned URLs).
    public let signature: String
    /// Everything after the signature, starting with `/`, exactly as received: the text the signature signs.
    public let signedPath: String
    /// The option segments in order, each percent-decoded once (a `%` that starts no valid escape is kept, so
    /// `round:50%` and `round:50%25` are the same option).
    public let optionSegments: [String]
    /// The image's source, decoded.
    public let source: ServeSource
    /// The extension after `@` (plain) or `.` (base64url), as written; nil when there is none.
    public let fileExtension: String?

    /// Takes `path` apart.
    ///
    /// - Parameters:
    ///   - path: The request path as received (percent-encoded), starting with `/`, without the query.
    ///   - maximumOptions: Most option segments allowed; the parse stops at the first one past it.
    /// - Throws: A 400 ``ServeRequestError`` for a missing signature or source, an empty segment, more options than
    ///   `maximumOptions`, a malformed source URL, extension or percent escape, or a source that is not `http`, `https`
    ///   or `local:///`.
    public static func parse(_ path: String, maximumOptions: Int = .max) throws(ServeRequestError) -> ServePath {
        guard path.hasPrefix("/") else { throw .badRequest("the path must start with \"/\"") }
        guard !path.contains("?"), !path.contains("#") else {
            throw .badRequest("the path contains \"?\" or \"#\" (write them %3F and %23 in a plain source URL)")
        }
        let (signature, signedPath) = split(path)
        guard !signature.isEmpty else { throw .badRequest("the path has an empty signature segment") }
        var options: [String] = []
        var rest = signedPath.dropFirst()
        while true {
            guard !rest.isEmpty else { throw .badRequest("the path has no source URL after its options") }
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            let segment = rest[..<end]
            guard !segment.isEmpty else {
                // One empty segment may end the options before a base64 source: some imgproxy clients write `//`.
                let after = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
                guard !options.isEmpty, !after.isEmpty, !after.hasPrefix("/"), !after.hasPrefix("plain/") else {
                    throw .badRequest("the path has an empty segment (\"//\")")
                }
                rest = after
                break
            }
            // A CDN may escape the colons of options (imgproxy accepts %3A for them).
            if !segment.contains(":") && !segment.contains("%3A") && !segment.contains("%3a") { break }
            guard options.count < maximumOptions else {
                throw .badRequest("the path has more than \(maximumOptions) options")
            }
            guard let decoded = PercentDecoding.lenient(segment) else {
                throw .badRequest("option \(ServeRequestError.quoted(segment)) is not UTF-8 once percent-decoded")
            }
            options.append(decoded)
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
        }
        let (source, fileExtension) =
            rest == "plain" || rest.hasPrefix("plain/") ? try plainSource(rest.dropFirst(6)) : try base64Source(rest)
        return ServePath(
            signature: String(signature), signedPath: String(signedPath), optionSegments: options, source: source,
            fileExtension: fileExtension)
    }

    /// The signature segment and what follows it (from its `/`, or empty), with one leading `/` dropped. Lenient, so
    /// ``ServeRequest`` can check the signature before anything else about the path is judged.
    static func split(_ path: String) -> (signature: Substring, signedPath: Substring) {
        let body = path.hasPrefix("/") ? path.dropFirst() : path[...]
        let slash = body.firstIndex(of: "/") ?? body.endIndex
        return (body[..<slash], body[slash...])
    }

    /// `text` is what follows `plain/`: the percent-encoded URL, then `@` and the extension.
    private static func plainSource(_ text: Substring) throws(ServeRequestError) -> (ServeSource, String?) {
        var encoded = text
        var fileExtension: String?
        // The last `@`: a literal `@` in the source URL arrives as %40.
        if let at = text.lastIndex(of: "@") {
            encoded = text[..<at]
            fileExtension = try checkedExtension(text[text.index(after: at)...], separator: "@")
        }
        guard !encoded.isEmpty else { throw .badRequest("the path has no source URL after \"plain/\"") }
        guard let decoded = PercentDecoding.strict(encoded) else {
            throw .badRequest(
                "source URL \(ServeRequestError.quoted(encoded)) has a \"%\" that starts no valid escape, or is not UTF-8")
        }
        return (try ServeSource.parse(decoded), fileExtension)
    }

    /// `text` is the base64url source, maybe over several segments, then maybe `.` and the extension.
    private static func base64Source(_ text: Substring) throws(ServeRequestError) -> (ServeSource, String?) {
        var pieces = text.split(separator: "/", omittingEmptySubsequences: false)
        if ServeOptions.knownNames.contains(pieces[0].lowercased()) {
            // No base64url of a URL spells an option name: this was meant as an option without arguments.
            throw .badRequest(
                "\(ServeRequestError.quoted(pieces[0])) has no \":\", so it would start the source URL; write an option "
                    + "without arguments with a trailing colon (\"\(pieces[0]):\")")
        }
        guard !pieces.contains(where: \.isEmpty) else {
            throw .badRequest("the base64url source URL has an empty segment")
        }
        var fileExtension: String?
        let last = pieces[pieces.count - 1]
        if let dot = last.firstIndex(of: ".") {
            fileExtension = try checkedExtension(last[last.index(after: dot)...], separator: ".")
            pieces[pieces.count - 1] = last[..<dot]
        }
        let joined = pieces.joined()
        guard let bytes = Base64Text.decode(joined.utf8, .urlSafe), !bytes.isEmpty, let decoded = String(validating: bytes, as: UTF8.self)
        else {
            throw .badRequest(
                "source \(ServeRequestError.quoted(joined)) is not base64url of a UTF-8 URL (and no \"plain/\" precedes it)")
        }
        return (try ServeSource.parse(decoded), fileExtension)
    }

    /// Letters and digits only: anything else means the separator was taken from inside the URL. Empty is no extension,
    /// as imgproxy reads it (some clients write the separator whatever follows).
    private static func checkedExtension(_ text: Substring, separator: Character) throws(ServeRequestError) -> String? {
        if text.isEmpty { return nil }
        guard text.count <= 10, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            let hint = separator == "@" ? " (a literal \"@\" in a plain source URL is written %40)" : ""
            throw .badRequest("extension \(ServeRequestError.quoted(text)) after \"\(separator)\" is not a file extension\(hint)")
        }
        return String(text)
    }
}
