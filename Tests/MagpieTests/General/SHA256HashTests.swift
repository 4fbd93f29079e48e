import Crypto
import Testing
@testable import MagpieCore

/// MagpieCore's own SHA-256 gives swift-crypto's digests: cache file names, data-URL keys and transform keys stay what
/// they were when swift-crypto made them.
@Suite struct SHA256HashTests {
    @Test func knownVectorsMatchFIPS180Examples() {
        #expect(lowercaseHex(SHA256Hash.digest("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(lowercaseHex(SHA256Hash.digest([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(lowercaseHex(SHA256Hash.digest(twoBlocks.utf8)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func everyLengthAroundTheBlockBoundariesMatchesSwiftCrypto() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(SHA256Hash.digest(bytes) == Array(SHA256.hash(data: bytes)), "length \(length)")
        }
    }

    @Test func aMegabyteFedInUnevenPiecesMatchesSwiftCrypto() {
        let bytes = (0..<(1 << 20) + 7).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        var hash = SHA256Hash()
        var start = 0
        var step = 1
        while start < bytes.count {
            let end = min(bytes.count, start + step)
            hash.update(bytes[start..<end])
            start = end
            step = step % 131 + 17
        }
        #expect(hash.finalize() == Array(SHA256.hash(data: bytes)))
    }

    @Test func rawMemoryAndSequencesOfTheSameBytesGiveOneDigest() {
        let numbers: [Double] = [0.3127, 0.329, 0.64, 0.33, 2.2]
        let raw = numbers.withUnsafeBytes { SHA256Hash.digest($0) }
        let copied = numbers.withUnsafeBytes { SHA256Hash.digest(Array($0)) }
        #expect(raw == copied)
        #expect(raw == numbers.withUnsafeBytes { Array(SHA256.hash(data: $0)) })
    }
}
