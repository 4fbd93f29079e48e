import Foundation
import MagpieServer
import Testing

/// The whole request check: signature first (403), then the path and options (400).
struct ServeRequestTests {
    let signer: ImageURLSigner
    let presets = ["thumb": ["resize:100x100:fill", "quality:70"]]

    init() throws {
        signer = try ImageURLSigner(hexPairs: [
            (ImageURLSignerTests.key, ImageURLSignerTests.salt),
        ])
    }

    func signed(_ signedPath: String) -> String {
        "/" + signer.signature(forPath: signedPath) + signedPath
    }

    func parse(_ path: String, allowsUnsigned: Bool = false) throws(ServeRequestError) -> ServeRequest {
        try ServeRequest.parse(path: path, signer: signer, allowsUnsigned: allowsUnsigned, presets: presets)
    }

    func error(_ path: String, allowsUnsigned: Bool = false) throws -> ServeRequestError {
        try #require(throws: ServeRequestError.self) { try parse(path, allowsUnsigned: allowsUnsigned) }
    }

    @Test func aSignedURLGivesItsSourceAndOptions() throws {
        let request = try parse(signed("/preset:thumb/round:8/plain/http%3A%2F%2Fimg.example.com%2Fa.jpg@webp"))
        #expect(request.source == .remote(URL(string: "http://img.example.com/a.jpg")!))
        #expect(request.options.format == .fixed(.webp))
        #expect(request.options.quality == 70)
        #expect(request.options.processor.identifier == (try ImageProcessorSpec.parse("resize:100x100:fill|round:8").identifier))
    }

    @Test func theImgproxyKnownAnswerURLIsAcceptedWithImgproxysMeaning() throws {
        // imgproxy's documented example, signed by imgproxy's documented key and salt.
        let request = try parse("/" + ImageURLSignerTests.imgproxySignature + ImageURLSignerTests.imgproxyPath)
        #expect(request.source == .remote(URL(string: "http://img.example.com/pretty/image.jpg")!))
        #expect(request.options.imgproxy.resizingType == .fit)
        #expect(request.options.imgproxy.width == 300 && request.options.imgproxy.height == 300)
    }

    @Test func aBadSignatureIs403EvenWhenTheOptionsAreAlsoBad() throws {
        let good = signed("/frobnicate:1/plain/ftp://example.com/a.png")
        #expect(try error(good).status == 400)
        let forged = "/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/frobnicate:1/plain/ftp://example.com/a.png"
        let refused = try error(forged)
        #expect(refused == .forbidden("invalid signature"))
        #expect(!refused.message.contains("AAAA"))
    }

    @Test func aSignatureForAnotherPathIs403() throws {
        let signature = signer.signature(forPath: "/blur:1/plain/http://example.com/a.png")
        #expect(try error("/\(signature)/blur:2/plain/http://example.com/a.png").status == 403)
    }

    @Test(arguments: ["_", "insecure"])
    func unsignedURLsAre403UnlessTheServerAllowsThem(marker: String) throws {
        let path = "/\(marker)/blur:2/plain/http://example.com/a.png"
        #expect(try error(path) == .forbidden("unsigned URLs are not allowed"))
        let request = try parse(path, allowsUnsigned: true)
        #expect(request.options.processor.identifier == "blur:2")
    }

    @Test func allowingUnsignedURLsDoesNotAcceptWrongSignatures() throws {
        #expect(try error("/wrong/blur:2/plain/http://example.com/a.png", allowsUnsigned: true).status == 403)
    }

    @Test func anUnsignedURLThatIsAllowedIsStillCheckedFor400s() throws {
        let refused = try error("/_/blur:2/plain/local:///../etc/passwd", allowsUnsigned: true)
        #expect(refused.status == 400)
    }

    @Test func aServerWithoutKeysRefusesSignedURLs() throws {
        let path = signed("/blur:2/plain/http://example.com/a.png")
        let refused = try #require(throws: ServeRequestError.self) {
            try ServeRequest.parse(path: path, signer: ImageURLSigner(keys: []), allowsUnsigned: true, presets: [:])
        }
        #expect(refused.status == 403)
    }

    @Test(arguments: ["", "/", "nothing", "//x"])
    func pathsWithoutAValidSignatureAre403WhateverElseIsWrong(path: String) throws {
        #expect(try error(path).status == 403)
    }

    @Test func theSignatureCoversTheRawEncodedPathSoReEncodingBreaksIt() throws {
        let path = signed("/plain/http%3A%2F%2Fexample.com%2Fa.png")
        _ = try parse(path)
        #expect(try error(path.replacingOccurrences(of: "%3A", with: "%3a")).status == 403)
    }
}
