import Crypto
import Magpie

/// Verifies thumbor's URL signatures, so URLs that thumbor's client libraries (libthumbor and its ports) sign work
/// unchanged: the signature is urlsafe base64, with its `=` padding, of HMAC-SHA1 keyed with the `SECURITY_KEY` text
/// (its UTF-8 bytes, not hex) over the path after the signature segment, without its leading `/`
/// (`300x200/smart/example.com/a.jpg`), exactly as received.
public struct ThumborSigner: Sendable {
    private let key: SymmetricKey?

    /// A signer for `securityKey`; nil or empty accepts no signature.
    public init(securityKey: String?) {
        key = securityKey.flatMap { $0.isEmpty ? nil : SymmetricKey(data: Array($0.utf8)) }
    }

    /// True when no key is configured: then no signature is valid.
    public var isEmpty: Bool { key == nil }

    /// The signature of `path` (the text after `/{signature}/`), padded as thumbor writes it; nil without a key.
    public func signature(forPath path: String) -> String? {
        guard let key else { return nil }
        let code = Array(HMAC<Insecure.SHA1>.authenticationCode(for: Array(path.utf8), using: key))
        return Base64Text.encodeURLSafe(code) + "="  // 20 bytes: 27 characters, one of padding
    }

    /// Whether `signature` signs `path`; padding may be left out (a proxy may strip it). Constant-time in the
    /// position of the first wrong byte.
    public func isValid(signature: String, path: String) -> Bool {
        guard let key, let given = Base64Text.decode(signature.utf8, .urlSafe), given.count == Insecure.SHA1.byteCount else { return false }
        return HMAC<Insecure.SHA1>.isValidAuthenticationCode(given, authenticating: Array(path.utf8), using: key)
    }

    /// Whether `segment` is shaped like a thumbor signature (28 base64url characters ending in `=`, or the 27 before
    /// it): how a path is told from an imgproxy one (imgproxy's are 43 characters, never padded).
    static func looksLikeSignature(_ segment: Substring) -> Bool {
        let body = segment.hasSuffix("=") ? segment.dropLast() : segment
        return body.count == 27 && body.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
