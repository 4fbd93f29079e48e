import Foundation
import MagpieServer
import Testing

/// imgproxy-compatible HMAC-SHA256 signatures: known answers, key rotation and everything that must not verify.
struct ImageURLSignerTests {
    static let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
    static let otherKey = "00112233445566778899aabbccddeeff"
    static let otherSalt = "cafe"
    static let imgproxyPath = "/rs:fit:300:300/plain/http://img.example.com/pretty/image.jpg"
    static let encodedPath = "/resize:300x300:fit/plain/http%3A%2F%2Fimg.example.com%2Fpretty%2Fimage.jpg@webp"
    // Computed with Python: base64.urlsafe_b64encode(hmac.new(key, salt + path, hashlib.sha256).digest()).rstrip(b"=")
    static let imgproxySignature = "m3k5QADfcKPDj-SDI2AIogZbC3FlAXszuwhtWXYqavc"
    static let encodedSignature = "-z7Ccg5EY3np0n0IWrhtHQeKTHrqXrDiSjPjUAybp-c"
    static let encodedSignatureOtherKey = "FzcxJW0Wb5AuddWe8F_sZ0DrYU5GZFMjlPtrmFJMuTI"

    let signer: ImageURLSigner

    init() throws {
        signer = try ImageURLSigner(hexPairs: [(Self.key, Self.salt)])
    }

    @Test func signatureMatchesTheKnownAnswerComputedWithPython() {
        #expect(signer.signature(forPath: Self.imgproxyPath) == Self.imgproxySignature)
        #expect(signer.signature(forPath: Self.encodedPath) == Self.encodedSignature)
        #expect(signer.isValid(signature: Self.imgproxySignature, path: Self.imgproxyPath))
        #expect(signer.isValid(signature: Self.encodedSignature, path: Self.encodedPath))
    }

    @Test func rawByteKeysSignLikeTheirHexForm() {
        let bytes: (String) -> [UInt8] = { hex in
            stride(from: 0, to: hex.count, by: 2).map {
                let start = hex.index(hex.startIndex, offsetBy: $0)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
            }
        }
        let raw = ImageURLSigner(keys: [(bytes(Self.key), bytes(Self.salt))])
        #expect(raw.signature(forPath: Self.imgproxyPath) == Self.imgproxySignature)
    }

    @Test func uppercaseHexGivesTheSameSignature() throws {
        let upper = try ImageURLSigner(hexPairs: [(Self.key.uppercased(), Self.salt.uppercased())])
        #expect(upper.signature(forPath: Self.imgproxyPath) == Self.imgproxySignature)
    }

    @Test func aSignatureMadeWithAnyConfiguredPairVerifiesAndTheFirstPairSigns() throws {
        let rotated = try ImageURLSigner(hexPairs: [(Self.otherKey, Self.otherSalt), (Self.key, Self.salt)])
        #expect(rotated.signature(forPath: Self.encodedPath) == Self.encodedSignatureOtherKey)
        #expect(rotated.isValid(signature: Self.encodedSignatureOtherKey, path: Self.encodedPath))
        #expect(rotated.isValid(signature: Self.encodedSignature, path: Self.encodedPath))
        #expect(!signer.isValid(signature: Self.encodedSignatureOtherKey, path: Self.encodedPath))
    }

    @Test func aSignatureForAnotherPathOrWithAChangedCharacterDoesNotVerify() {
        #expect(!signer.isValid(signature: Self.imgproxySignature, path: Self.encodedPath))
        #expect(!signer.isValid(signature: Self.imgproxySignature, path: Self.imgproxyPath + "x"))
        var changed = Array(Self.imgproxySignature)
        changed[10] = changed[10] == "A" ? "B" : "A"
        #expect(!signer.isValid(signature: String(changed), path: Self.imgproxyPath))
        #expect(!signer.isValid(signature: "", path: Self.imgproxyPath))
    }

    @Test func aTruncatedOrLengthenedSignatureDoesNotVerify() {
        #expect(!signer.isValid(signature: String(Self.imgproxySignature.dropLast()), path: Self.imgproxyPath))
        #expect(!signer.isValid(signature: String(Self.imgproxySignature.prefix(32)), path: Self.imgproxyPath))
        #expect(!signer.isValid(signature: Self.imgproxySignature + "AAAA", path: Self.imgproxyPath))
    }

    @Test func aSignatureWhoseUnusedLowBitsAreSetDoesNotVerify() {
        // 43 characters carry 258 bits for 256: the last character's two low bits must be zero, so each signature has
        // one spelling (its last character here is "c", 011100; "d" is 011101).
        #expect(Self.imgproxySignature.hasSuffix("c"))
        #expect(!signer.isValid(signature: Self.imgproxySignature.dropLast() + "d", path: Self.imgproxyPath))
    }

    @Test func correctBase64PaddingIsAcceptedAndWrongPaddingIsNot() {
        #expect(signer.isValid(signature: Self.imgproxySignature + "=", path: Self.imgproxyPath))
        #expect(!signer.isValid(signature: Self.imgproxySignature + "==", path: Self.imgproxyPath))
    }

    @Test func theStandardBase64AlphabetIsNotAccepted() {
        // "-" and "_" are base64url; "+" and "/" would be the same bytes in standard base64.
        let standard = Self.imgproxySignature.replacingOccurrences(of: "-", with: "+")
        #expect(standard != Self.imgproxySignature)
        #expect(!signer.isValid(signature: standard, path: Self.imgproxyPath))
    }

    @Test func aSignerWithoutKeysIsEmptyVerifiesNothingAndSignsWithTheUnsignedMarker() throws {
        let empty = try ImageURLSigner(hexPairs: [])
        #expect(empty.isEmpty)
        #expect(!signer.isEmpty)
        #expect(!empty.isValid(signature: Self.imgproxySignature, path: Self.imgproxyPath))
        #expect(empty.signature(forPath: Self.imgproxyPath) == "_")
    }

    @Test(arguments: [
        ([("abc", "00")], "key 1", "odd number"),
        ([("00", "zz")], "salt 1", "not hex"),
        ([("00", "00"), ("0g", "00")], "key 2", "not hex"),
        ([("00", "00"), ("", "00")], "key 2", "empty"),
    ])
    func badHexNamesTheValueByPositionWithoutEchoingIt(pairs: [(String, String)], which: String, problem: String) throws {
        let error = try #require(throws: ImageURLSigner.InvalidKey.self) {
            try ImageURLSigner(hexPairs: pairs.map { (key: $0.0, salt: $0.1) })
        }
        #expect(error.which == which)
        #expect(error.problem.contains(problem))
        #expect(error.description.hasPrefix(which))
    }

    @Test func theErrorForBadHexDoesNotContainTheSecret() throws {
        let secret = String(Self.key.dropLast()) + "x"
        let error = try #require(throws: ImageURLSigner.InvalidKey.self) {
            try ImageURLSigner(hexPairs: [(key: secret, salt: Self.salt)])
        }
        #expect(!error.description.contains(secret.prefix(8)))
        #expect(!error.description.contains(Self.salt.prefix(8)))
    }

    @Test func anEmptySaltIsAllowed() throws {
        let unsalted = try ImageURLSigner(hexPairs: [(Self.key, "")])
        #expect(unsalted.signature(forPath: Self.imgproxyPath) != Self.imgproxySignature)
        #expect(unsalted.isValid(signature: unsalted.signature(forPath: Self.imgproxyPath), path: Self.imgproxyPath))
    }
}
