/// A verified, parsed request with the parts of its result key that no header changes, worked out once per path
/// (``ImageServer/parsedRequests``) instead of once per request: the normalised options text is built from every
/// option and processor.
struct ParsedServeRequest: Sendable {
    let request: ServeRequest
    /// Source identity and normalised options, each followed by a newline; the format follows.
    let keyPrefix: String
    /// The whole result key when the URL fixes the format; nil for `auto`, whose key depends on `Accept`.
    let fixedFormatKey: String?

    init(_ request: ServeRequest) {
        self.request = request
        keyPrefix = request.source.cacheIdentity + "\n" + request.options.normalized + "\n"
        switch request.options.format {
        case .fixed(let format): fixedFormatKey = keyPrefix + format.rawValue
        case .auto: fixedFormatKey = nil
        }
    }
}
