import Foundation
import MagpieServer
import Testing

/// Taking image URL paths apart: plain and base64url sources, extensions, and everything malformed (all 400).
struct ServePathTests {
    static let imageURL = "http://img.example.com/pretty/image.jpg"
    static let imageBase64 = "aHR0cDovL2ltZy5leGFtcGxlLmNvbS9wcmV0dHkvaW1hZ2UuanBn"

    static func remote(_ text: String) -> ServeSource { .remote(URL(string: text)!) }

    static func badRequest(_ path: String) throws -> ServeRequestError {
        let error = try #require(throws: ServeRequestError.self) { try ServePath.parse(path) }
        #expect(error.status == 400)
        return error
    }

    // MARK: Plain sources

    @Test func aPlainUnencodedSourceWithoutExtensionParses() throws {
        let path = try ServePath.parse("/sig/resize:300x300:fit/round:12/plain/\(Self.imageURL)")
        #expect(path.signature == "sig")
        #expect(path.signedPath == "/resize:300x300:fit/round:12/plain/\(Self.imageURL)")
        #expect(path.optionSegments == ["resize:300x300:fit", "round:12"])
        #expect(path.source == Self.remote(Self.imageURL))
        #expect(path.fileExtension == nil)
    }

    @Test func aPlainPercentEncodedSourceIsDecodedOnceAndTheTextAfterTheLastAtIsTheExtension() throws {
        let raw = "/s/plain/http%3A%2F%2Fimg.example.com%2Fa%2520b.jpg%3Fv%3D2@webp"
        let path = try ServePath.parse(raw)
        #expect(path.source == Self.remote("http://img.example.com/a%20b.jpg?v=2"))
        #expect(path.fileExtension == "webp")
        #expect(path.signedPath == "/plain/http%3A%2F%2Fimg.example.com%2Fa%2520b.jpg%3Fv%3D2@webp")
        #expect(path.optionSegments.isEmpty)
    }

    @Test func anEncodedAtSignIsPartOfTheSourceURL() throws {
        let path = try ServePath.parse("/s/plain/http://example.com/me%40home.png@png")
        #expect(path.source == Self.remote("http://example.com/me@home.png"))
        #expect(path.fileExtension == "png")
        let noExtension = try ServePath.parse("/s/plain/http://example.com/me%40home.png")
        #expect(noExtension.fileExtension == nil)
    }

    @Test func aLiteralAtSignInsideThePlainURLIsRefusedWithAHintAboutPercent40() throws {
        let error = try Self.badRequest("/s/plain/http://example.com/me@home/a.png")
        #expect(error.message.contains("home/a.png"))
        #expect(error.message.contains("%40"))
    }

    @Test func anEmptyExtensionIsNoExtensionAsImgproxyReadsIt() throws {
        // Some imgproxy clients (mkimgproxy) always write the separator.
        #expect(try ServePath.parse("/s/plain/http://example.com/a.png@").fileExtension == nil)
        let base64 = try ServePath.parse("/s/aHR0cDovL2V4YW1wbGUuY29tL2EucG5n.")
        #expect(base64.fileExtension == nil && base64.source == .remote(URL(string: "http://example.com/a.png")!))
    }

    @Test func anEmptySegmentMayEndTheOptionsBeforeABase64SourceAndColonsMayBeEscaped() throws {
        let doubled = try ServePath.parse("/s/rs:fit:10:10//aHR0cDovL2V4YW1wbGUuY29tL2EucG5n.webp")
        #expect(doubled.optionSegments == ["rs:fit:10:10"] && doubled.fileExtension == "webp")
        #expect(try ServePath.parse("/s/rs%3Afit%3A10%3A10/plain/http://example.com/a.png").optionSegments == ["rs:fit:10:10"])
        _ = try Self.badRequest("/s//aHR0cDovL2V4YW1wbGUuY29tL2EucG5n")
        _ = try Self.badRequest("/s/w:10//plain/http://example.com/a.png")
    }

    @Test(arguments: ["%zz", "%4", "%", "%FF%FE"])
    func aPlainSourceWithABadPercentEscapeOrNonUTF8BytesIsRefused(escape: String) throws {
        let error = try Self.badRequest("/s/plain/http://example.com/a\(escape).png")
        #expect(error.message.contains("example.com"))
    }

    @Test func aRawQueryOrFragmentInThePathIsRefused() throws {
        _ = try Self.badRequest("/s/plain/http://example.com/a.png?v=1")
        _ = try Self.badRequest("/s/plain/http://example.com/a.png#top")
    }

    // MARK: Base64url sources

    @Test func aBase64URLSourceWithoutExtensionParses() throws {
        let path = try ServePath.parse("/sig/blur:2/\(Self.imageBase64)")
        #expect(path.source == Self.remote(Self.imageURL))
        #expect(path.fileExtension == nil)
        #expect(path.optionSegments == ["blur:2"])
    }

    @Test func aBase64URLSourceWithExtensionParses() throws {
        let path = try ServePath.parse("/sig/\(Self.imageBase64).webp")
        #expect(path.source == Self.remote(Self.imageURL))
        #expect(path.fileExtension == "webp")
    }

    @Test func base64PaddingIsOptional() throws {
        let padded = try ServePath.parse("/s/bG9jYWw6Ly8vcGhvdG9zL2NhdC5wbmc=.png")
        let unpadded = try ServePath.parse("/s/bG9jYWw6Ly8vcGhvdG9zL2NhdC5wbmc.png")
        #expect(padded.source == .local(path: "/photos/cat.png"))
        #expect(unpadded.source == padded.source)
        _ = try Self.badRequest("/s/bG9jYWw6Ly8vcGhvdG9zL2NhdC5wbmc==.png")
    }

    @Test func aBase64SourceMaySpanSeveralSegments() throws {
        let path = try ServePath.parse("/s/crop:10x10/aHR0cDovL2ltZy5leGFt/cGxlLmNvbS9wcmV0dHkv/aW1hZ2UuanBn.jpg")
        #expect(path.source == Self.remote(Self.imageURL))
        #expect(path.fileExtension == "jpg")
        #expect(path.optionSegments == ["crop:10x10"])
    }

    @Test func aBase64SourceWithAnExtensionBeforeItsLastSegmentOrTwoDotsIsRefused() throws {
        _ = try Self.badRequest("/s/aHR0cDovL2ltZy5leGFt.png/cGxlLmNvbS9wcmV0dHkv")
        _ = try Self.badRequest("/s/\(Self.imageBase64).png.webp")
    }

    @Test func textThatIsNotBase64URLIsRefused() throws {
        _ = try Self.badRequest("/s/not+base64")
        _ = try Self.badRequest("/s/aGVsbG8")  // "hello": base64 but no scheme
    }

    @Test func aBareOptionNameWithoutColonGetsAHintToWriteTheColon() throws {
        let error = try Self.badRequest("/s/gray/plain/\(Self.imageURL)")
        #expect(error.message.contains("\"gray:\""))
    }

    // MARK: Structure

    @Test(arguments: ["/sig", "/sig/", "/sig/resize:10x10", "/sig/resize:10x10/", "/sig/plain", "/sig/plain/", "/sig/plain/@png"])
    func aPathWithoutSourceIsRefused(path: String) throws {
        _ = try Self.badRequest(path)
    }

    @Test(arguments: [
        "//plain/http://example.com/a.png",
        "/sig//plain/http://example.com/a.png",
        "/sig/resize:10x10//plain/http://example.com/a.png",
        "/sig/aHR0cDovL2ltZy5leGFt//cGxlLmNvbS9wcmV0dHkv",
        "/sig/\(imageBase64)/",
        "sig/plain/http://example.com/a.png",
        "",
    ])
    func emptySegmentsAndPathsWithoutLeadingSlashAreRefused(path: String) throws {
        _ = try Self.badRequest(path)
    }

    @Test func optionSegmentsArePercentDecodedOnceAndALoneSignIsKept() throws {
        let path = try ServePath.parse("/s/round:50%25h/round:50%/border:2:%23ff0000/plain/\(Self.imageURL)")
        #expect(path.optionSegments == ["round:50%h", "round:50%", "border:2:#ff0000"])
    }

    // MARK: Source URLs

    @Test(arguments: [
        "ftp://example.com/a.png", "file:///etc/passwd", "data:image/png;base64,AAAA", "javascript:alert(1)",
        "gopher://example.com/", "example.com/a.png", "//example.com/a.png",
    ])
    func sourcesOtherThanHTTPHTTPSAndLocalAreRefused(url: String) throws {
        let encoded = url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        _ = try Self.badRequest("/s/plain/\(encoded)")
    }

    @Test(arguments: ["http://", "http:/example.com/a.png", "https:///a.png", "http://exa%20mple.com/a.png"])
    func remoteSourcesWithoutAUsableHostAreRefused(url: String) throws {
        _ = try Self.badRequest("/s/plain/\(url)")
    }

    @Test func remoteSourcesWithUserInfoOrControlCharactersAreRefused() throws {
        _ = try Self.badRequest("/s/plain/http://user:secret%40example.com/a.png")
        _ = try Self.badRequest("/s/plain/http://example.com/a.png%0D%0AX-Injected:%201")
    }

    @Test func remoteSourcesAreNormalisedSoEquivalentURLsShareACacheIdentity() throws {
        let variants = [
            "/s/plain/HTTP://Img.Example.COM:80/pretty/image.jpg",
            "/s/plain/http://img.example.com/pretty/image.jpg%23section",
            "/s/plain/\(Self.imageURL)",
        ]
        let identities = try variants.map { try ServePath.parse($0).source.cacheIdentity }
        #expect(Set(identities) == [Self.imageURL])
        let root = try ServePath.parse("/s/plain/https://example.com:443").source
        #expect(root.cacheIdentity == "https://example.com/")
        let port = try ServePath.parse("/s/plain/https://example.com:8443/a.png").source
        #expect(port.cacheIdentity == "https://example.com:8443/a.png")
    }

    @Test func localSourcesGiveTheirDecodedPathAndAStableIdentity() throws {
        let path = try ServePath.parse("/s/plain/local:///photos/cat%2520one.png@webp")
        #expect(path.source == .local(path: "/photos/cat one.png"))
        #expect(path.source.cacheIdentity == "local:///photos/cat one.png")
        #expect(path.fileExtension == "webp")
    }

    @Test(arguments: [
        "local:///photos/../etc/passwd", "local:///..", "local:///photos/%252E%252E/x.png", "local:///photos/./cat.png",
        "local:///photos//cat.png", "local:///", "local:///photos/", "local://host/photos/cat.png", "local:/photos/cat.png",
        "local:///cat%2500.png", "local:///cat.png%3Fx",
    ])
    func localSourcesWithDotDotAndOtherUnusableSegmentsAreRefused(url: String) throws {
        _ = try Self.badRequest("/s/plain/\(url)")
    }

    @Test func errorsNeverContainTheSignature() throws {
        let error = try Self.badRequest("/SECRETSIGNATURE/frobnicate/plain/ftp://example.com/a.png")
        #expect(!error.message.contains("SECRETSIGNATURE"))
    }
}
