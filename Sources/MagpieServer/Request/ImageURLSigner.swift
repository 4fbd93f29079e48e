import Crypto
import Magpie
import MagpieCore

/// Signs and verifies image URL paths the way imgproxy does, so existing signing code in any language works.
///
/// The signature of a path is base64url without padding of HMAC-SHA256(key, salt ‖ path), where the path is
/// everything after the signature segment, starting with `/` (`/resize:300x300:fit/plain/…`), and never includes
/// the query string. Several key/salt pairs may be configured at once, so keys can be rotated: a signature made
/// with any of them verifies, and new signatures are made with the first.
public struct ImageURLSigner: Sendable {
    /// A key or salt in the configuration that is not usable.
    public struct InvalidKey: Error, Sendable, Equatable, CustomStringConvertible {
        /// Which value, for example `key 2` or `salt 1` (pairs are counted from 1); never the value itself.
        public let which: String
        /// What is wrong with it, for example `odd number of hex digits`.
        public let problem: String

        /// For example `key 2 is not usable: odd number of hex digits`.
        public var description: String { "\(which) is not usable: \(problem)" }
    }

    private let keys: [(key: SymmetricKey, salt: [UInt8])]

    /// A signer for the given key/salt pairs; the first pair signs, every pair verifies.
    ///
    /// - Parameter keys: Raw key and salt bytes. An empty list gives a signer that accepts no signature.
    public init(keys: [(key: [UInt8], salt: [UInt8])]) {
        self.keys = keys.map { (SymmetricKey(data: $0.key), $0.salt) }
    }

    /// A signer for key/salt pairs written in hex, as imgproxy's configuration writes them.
    ///
    /// - Parameter hexPairs: Keys and salts in hex (either case). A key must not be empty; a salt may be.
    /// - Throws: ``InvalidKey`` naming the first bad value by position (`key 2`, `salt 1`), not by content.
    public init(hexPairs: [(key: String, salt: String)]) throws(InvalidKey) {
        var keys: [(key: [UInt8], salt: [UInt8])] = []
        for (index, pair) in hexPairs.enumerated() {
            let key = try Self.bytes(hex: pair.key, which: "key \(index + 1)")
            guard !key.isEmpty else { throw InvalidKey(which: "key \(index + 1)", problem: "empty") }
            keys.append((key, try Self.bytes(hex: pair.salt, which: "salt \(index + 1)")))
        }
        self.init(keys: keys)
    }

    /// True when no key is configured: then no signature is valid.
    public var isEmpty: Bool { keys.isEmpty }

    /// The signature of `path` with the first key/salt pair: 43 base64url characters.
    ///
    /// - Parameter path: The path after the signature, starting with `/`, without the query string.
    /// - Returns: The signature; `_` (the unsigned marker) when no key is configured.
    public func signature(forPath path: String) -> String {
        guard let first = keys.first else { return "_" }
        return Base64Text.encodeURLSafe(Self.code(path: path, key: first.key, salt: first.salt))
    }

    /// Whether `signature` is the signature of `path` under any configured pair.
    ///
    /// The comparison takes the same time wherever the first differing byte is, and every pair is tried even after
    /// a match, so timing tells an attacker neither how much of a guess was right nor which key matched.
    ///
    /// - Parameters:
    ///   - signature: Base64url; trailing `=` padding is accepted. A shortened signature is not valid.
    ///   - path: The path after the signature, starting with `/`, exactly as received.
    public func isValid(signature: String, path: String) -> Bool {
        guard let given = Base64Text.decode(signature.utf8, .urlSafe), given.count == SHA256.byteCount else { return false }
        var valid = false
        for pair in keys {
            // HashedAuthenticationCode's == is constant-time in swift-crypto.
            let matches = HMAC<SHA256>.isValidAuthenticationCode(
                given, authenticating: pair.salt + Array(path.utf8), using: pair.key)
            valid = valid || matches
        }
        return valid
    }

    private static func code(path: String, key: SymmetricKey, salt: [UInt8]) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: salt)
        hmac.update(data: Array(path.utf8))
        return Array(hmac.finalize())
    }

    private static func bytes(hex text: String, which: String) throws(InvalidKey) -> [UInt8] {
        do {
            return try MagpieCore.bytes(fromHex: text)
        } catch {
            switch error {
            case .oddLength: throw InvalidKey(which: which, problem: "odd number of hex digits")
            case .notHex(let offset): throw InvalidKey(which: which, problem: "not hex (character \(offset + 1) or \(offset + 2))")
            }
        }
    }
}
