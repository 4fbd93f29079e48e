/// An image request checked and interpreted: what the server must load and what it must do with it.
public struct ServeRequest: Sendable {
    /// Where the image comes from.
    public let source: ServeSource
    /// The processors and output options, presets expanded and the extension applied.
    public let options: ServeOptions

    /// Checks the signature of `path`, then parses it and its options.
    ///
    /// The signature is checked first, so a client without a key gets 403 for every path and learns nothing about
    /// how options are parsed. The signature `_` or `insecure` marks an unsigned URL, accepted only when
    /// `allowsUnsigned` is true; any other signature must verify with `signer`, whatever `allowsUnsigned` says.
    ///
    /// - Parameters:
    ///   - path: The request path as received (percent-encoded), without the query string; see ``ServePath``.
    ///   - signer: The configured keys.
    ///   - allowsUnsigned: Whether unsigned URLs are served.
    ///   - presets: Named lists of option segments from the configuration.
    ///   - maximumOptions: Most option segments in the path, and after presets are expanded (default 64).
    ///   - allowsSecurityOptions: Whether the URL may set imgproxy's source limits (else they are a 403).
    ///   - thumborSigner: thumbor's `SECURITY_KEY`, for thumbor's URLs (`/unsafe/…` or a 28-character signature,
    ///     ``ThumborSigner/looksLikeSignature(_:)``); `unsafe` is its unsigned marker, under `allowsUnsigned` too.
    /// - Throws: ``ServeRequestError`` with status 403 for an unsigned URL the server does not allow or a signature
    ///   that does not verify; status 400 for anything malformed (``ServePath/parse(_:maximumOptions:)``,
    ///   ``ServeOptions/parse(_:fileExtension:presets:maximumOptions:registry:)``).
    public static func parse(
        path: String, signer: ImageURLSigner, allowsUnsigned: Bool, presets: [String: [String]], maximumOptions: Int = 64,
        allowsSecurityOptions: Bool = false, thumborSigner: ThumborSigner = ThumborSigner(securityKey: nil)
    ) throws(ServeRequestError) -> ServeRequest {
        let (signature, signedPath) = ServePath.split(path)
        if signature == "unsafe" || ThumborSigner.looksLikeSignature(signature) {
            return try thumbor(signature: signature, signedPath: signedPath.dropFirst(), signer: thumborSigner,
                               allowsUnsigned: allowsUnsigned, maximumOptions: maximumOptions)
        }
        if signature == "_" || signature == "insecure" {
            guard allowsUnsigned else { throw .forbidden("unsigned URLs are not allowed") }
        } else if !signer.isValid(signature: String(signature), path: String(signedPath)) {
            throw .forbidden("invalid signature")
        }
        let parsed = try ServePath.parse(path, maximumOptions: maximumOptions)
        let options = try ServeOptions.parse(
            parsed.optionSegments, fileExtension: parsed.fileExtension, presets: presets, maximumOptions: maximumOptions)
        // imgproxy's answer too: the limits are the operator's unless they let URLs set them.
        if options.setsSecurityOptions && !allowsSecurityOptions {
            throw .forbidden("max_src_resolution, max_src_file_size and max_animation_frames are not allowed on this server")
        }
        return ServeRequest(source: parsed.source, options: options)
    }

    /// A thumbor URL: the signature (HMAC-SHA1 of the path after it) or `unsafe` checked first, then the grammar.
    private static func thumbor(
        signature: Substring, signedPath: Substring, signer: ThumborSigner, allowsUnsigned: Bool, maximumOptions: Int
    ) throws(ServeRequestError) -> ServeRequest {
        if signature == "unsafe" {
            guard allowsUnsigned else { throw .forbidden("unsafe URLs are not allowed") }
        } else if signer.isEmpty {
            throw .forbidden("thumbor signatures are not accepted: no thumbor key is configured")
        } else if !signer.isValid(signature: String(signature), path: String(signedPath)) {
            throw .forbidden("invalid signature")
        }
        let (thumbor, source) = try ThumborOptions.parse(signedPath)
        guard thumbor.filters.count <= maximumOptions else {
            throw .badRequest("the path has more than \(maximumOptions) filters")
        }
        return ServeRequest(source: source, options: ServeOptions(thumbor: thumbor))
    }
}
