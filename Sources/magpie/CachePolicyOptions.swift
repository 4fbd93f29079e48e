import ArgumentParser
import Magpie

/// How `fetch` and `prefetch` use the caches and talk HTTP: the origin's caching rules, extra request headers, and
/// which cache layers are used.
struct CachePolicyOptions: ParsableArguments {
    @Flag(name: .customLong("respect-cache-control"), help: """
        Follow the origin's HTTP caching rules (RFC 9111): Cache-Control, Expires, Age, Vary, \
        stale-while-revalidate, stale-if-error.
        """)
    var respectCacheControl = false

    @Option(name: .customLong("header"), help: ArgumentHelp(
        "Send this header with every request, e.g. 'Accept: image/avif' (repeatable; replaces Magpie's own value).",
        valueName: "Name: value"))
    var headers: [String] = []

    @Flag(name: .customLong("no-memory-cache"), help: "Neither read nor fill the memory cache.")
    var noMemoryCache = false

    @Flag(name: .customLong("no-disk-cache-write"), help: "Read the disk cache but write nothing to it.")
    var noDiskCacheWrite = false

    func validate() throws {
        _ = try parsedHeaders()
    }

    /// The `--header` values as header lines.
    func parsedHeaders() throws -> [HTTPHeaderField] {
        try headers.map { text in
            guard let colon = text.firstIndex(of: ":") else {
                throw ValidationError("--header must look like 'Name: value', got '\(text)'")
            }
            let name = String(text[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            let token = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
            guard !name.isEmpty, name.allSatisfy(token.contains), !value.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw ValidationError("--header '\(text)' is not a valid header line")
            }
            return HTTPHeaderField(name: name, value: value)
        }
    }

    /// The retrieval options these flags ask for.
    func magpieOptions() throws -> [MagpieOption] {
        var options: [MagpieOption] = []
        if respectCacheControl { options.append(.respectCacheControl) }
        if noMemoryCache { options += [.memoryCacheReads(false), .memoryCacheWrites(false)] }
        if noDiskCacheWrite { options.append(.diskCacheWrites(false)) }
        let lines = try parsedHeaders()
        if !lines.isEmpty {
            options.append(.requestModifier(AnyModifier { request in
                var request = request
                let names = Set(lines.map { $0.name.lowercased() })
                request.headers.removeAll { names.contains($0.name.lowercased()) }
                request.headers += lines
                return request
            }))
        }
        return options
    }
}
