import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct DataProviderTests {
    /// A 37x23 PNG, so decoded sizes can be told apart from any default.
    func pngBytes() throws -> Data {
        try PNGCoder().encode(Image(pixels: try TestImages.gradient(width: 37, height: 23, alpha: true)), options: .default)
    }

    func write(_ data: Data, named name: String, in folder: TemporaryFolder) throws -> URL {
        let url = folder.url.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// The `dataProviderFailed` cache key and message thrown by `provider.data()`.
    func providerFailure(_ provider: some ImageDataProvider,
                         sourceLocation: SourceLocation = #_sourceLocation) async -> (cacheKey: String, message: String)? {
        let error = await #expect(throws: MagpieError.self, sourceLocation: sourceLocation) { try await provider.data() }
        guard case .requestFailed(.dataProviderFailed(let key, let message))? = error else {
            Issue.record("expected dataProviderFailed, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return (key, message)
    }

    /// The text of the `invalidURL` error thrown by `provider.data()`.
    func invalidURLText(_ provider: DataURLImageDataProvider, sourceLocation: SourceLocation = #_sourceLocation) async -> String? {
        let error = await #expect(throws: MagpieError.self, sourceLocation: sourceLocation) { try await provider.data() }
        guard case .requestFailed(.invalidURL(let text))? = error else {
            Issue.record("expected invalidURL, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return text
    }

    func dataURL(_ text: String) throws -> DataURLImageDataProvider {
        DataURLImageDataProvider(url: try #require(URL(string: text)))
    }

    // MARK: Resources

    @Test func resourcesAndFileProvidersAreCachedUnderTheAbsoluteURLStringByDefault() throws {
        let url = try #require(URL(string: "https://images.example.com/a/b.png?size=large"))
        #expect(ImageResource(downloadURL: url).cacheKey == "https://images.example.com/a/b.png?size=large")
        let file = URL(fileURLWithPath: "/tmp/some folder/c.png")
        #expect(LocalFileImageDataProvider(fileURL: file).cacheKey == "file:///tmp/some%20folder/c.png")
        #expect(LocalFileImageDataProvider(fileURL: file, cacheKey: "mine").cacheKey == "mine")
    }

    @Test func aURLIsAResourceKeyedByItsAbsoluteString() throws {
        let url = try #require(URL(string: "https://images.example.com/photo.jpg"))
        let resource: any Resource = url
        #expect(resource.cacheKey == url.absoluteString)
        #expect(resource.downloadURL == url)
    }

    @Test func imageResourceKeepsACustomCacheKeyAndComparesByURLAndKey() throws {
        let url = try #require(URL(string: "https://cdn.example.com/p.png?sig=abc123"))
        let resource = ImageResource(downloadURL: url, cacheKey: "photo-42")
        #expect(resource.cacheKey == "photo-42")
        #expect(resource.downloadURL == url)
        #expect(resource == ImageResource(downloadURL: url, cacheKey: "photo-42"))
        #expect(resource != ImageResource(downloadURL: url))
        #expect(Set([resource, ImageResource(downloadURL: url, cacheKey: "photo-42")]).count == 1)
    }

    // MARK: Local files

    @Test func fileProviderReturnsTheFileBytesWhichDecodeToTheImage() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let png = try pngBytes()
        // A space and a percent sign: the path must be percent-decoded before it is opened.
        let url = try write(png, named: "my image 100%.png", in: folder)
        let provider = LocalFileImageDataProvider(fileURL: url)
        #expect(provider.contentURL == url)
        let data = try await provider.data()
        #expect(data == png)
        let image = try ImageCoderRegistry.shared.decode(data)
        #expect(image.pixelSize == PixelSize(width: 37, height: 23))
    }

    @Test func missingFileFailsWithThePathAndTheSystemReason() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let url = folder.url.appendingPathComponent("absent.png")
        let failure = try #require(await providerFailure(LocalFileImageDataProvider(fileURL: url)))
        #expect(failure.cacheKey == url.absoluteString)
        #expect(failure.message.contains(url.path))
        #expect(failure.message.contains("No such file or directory"))
    }

    @Test func directoryFailsWithThePathInsteadOfBeingRead() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let failure = try #require(await providerFailure(LocalFileImageDataProvider(fileURL: folder.url, cacheKey: "dir")))
        #expect(failure.cacheKey == "dir")
        #expect(failure.message.contains(folder.url.path))
        #expect(failure.message.contains("directory"))
    }

    @Test func fileLargerThanTheMaximumSizeIsRefusedWithItsSize() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let png = try pngBytes()
        let url = try write(png, named: "big.png", in: folder)
        let failure = try #require(await providerFailure(LocalFileImageDataProvider(fileURL: url, maximumSize: png.count - 1)))
        #expect(failure.message.contains(url.path))
        #expect(failure.message.contains("\(png.count) bytes"))
        #expect(failure.message.contains("\(png.count - 1)"))
        // Exactly at the limit is allowed.
        #expect(try await LocalFileImageDataProvider(fileURL: url, maximumSize: png.count).data() == png)
        #expect(LocalFileImageDataProvider(fileURL: url).maximumSize == 50 * 1024 * 1024)
    }

    @Test(.enabled(if: getuid() != 0, "root reads files regardless of their mode"))
    func unreadableFileFailsWithThePathAndTheSystemReason() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let url = try write(try pngBytes(), named: "locked.png", in: folder)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: url.path)
        let failure = try #require(await providerFailure(LocalFileImageDataProvider(fileURL: url)))
        #expect(failure.message.contains(url.path))
        #expect(failure.message.contains("Permission denied"))
    }

    // MARK: Base64 and raw bytes

    @Test func base64WithWhitespaceURLSafeAlphabetOrNoPaddingDecodesToTheSameBytes() async throws {
        // 0xFB 0xFF 0xBF encodes as "+/+/" and 0xFE as "/g==": both alphabets' special characters and padding.
        let bytes = Data([0xFB, 0xFF, 0xBF, 0xFE]) + (try pngBytes())
        let standard = bytes.base64EncodedString()
        #expect(standard.contains("+") && standard.contains("/") && standard.hasSuffix("="))
        let variants = [
            standard,
            bytes.base64EncodedString(options: [.lineLength64Characters, .endLineWithCarriageReturn, .endLineWithLineFeed]),
            " \t" + bytes.base64EncodedString(options: .lineLength76Characters) + "\n",
            standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"),
            standard.replacingOccurrences(of: "=", with: ""),
        ]
        for text in variants {
            #expect(try await Base64ImageDataProvider(base64String: text, cacheKey: "k").data() == bytes)
        }
        let png = try pngBytes()
        let decoded = try await Base64ImageDataProvider(base64String: png.base64EncodedString(), cacheKey: "k").data()
        #expect(try ImageCoderRegistry.shared.decode(decoded).pixelSize == PixelSize(width: 37, height: 23))
    }

    @Test func invalidBase64FailsWithTheProvidersCacheKey() async throws {
        // A foreign character, padding mid-text, a dangling sixth of a byte, padding that does not complete a group.
        for text in ["iVBORw0K*GgO", "QUJD=QUJD", "QUJDQ", "QQ=", "QUJD="] {
            let failure = try #require(await providerFailure(Base64ImageDataProvider(base64String: text, cacheKey: "avatar-7")))
            #expect(failure.cacheKey == "avatar-7")
            #expect(failure.message.contains("base64"))
        }
    }

    @Test func rawProviderReturnsItsBytesUnderItsKey() async throws {
        let png = try pngBytes()
        let provider = RawImageDataProvider(data: png, cacheKey: "raw-1")
        #expect(provider.cacheKey == "raw-1")
        #expect(provider.contentURL == nil)
        #expect(try await provider.data() == png)
    }

    // MARK: data: URLs

    @Test func base64DataURLDecodesToTheImageAndKeepsItsMediaType() async throws {
        let png = try pngBytes()
        let provider = try dataURL("data:image/png;base64," + png.base64EncodedString())
        #expect(provider.mediaType == "image/png")
        #expect(provider.contentURL == provider.url)
        let data = try await provider.data()
        #expect(data == png)
        #expect(try ImageCoderRegistry.shared.decode(data).pixelSize == PixelSize(width: 37, height: 23))
        // Parameters before ;base64, an upper-case scheme and media type, and no media type at all.
        #expect(try await dataURL("data:image/png;name=a.png;base64," + png.base64EncodedString()).data() == png)
        let upper = try dataURL("DATA:IMAGE/PNG;BASE64," + png.base64EncodedString())
        #expect(try await upper.data() == png)
        #expect(upper.mediaType == "image/png")
        let untyped = try dataURL("data:;base64," + png.base64EncodedString())
        #expect(untyped.mediaType == nil)
        #expect(try await untyped.data() == png)
    }

    @Test func percentEncodedDataURLDecodesItsEscapes() async throws {
        let png = try pngBytes()
        let escaped = png.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return "%" + (hex.count == 1 ? "0" + hex : hex)
        }.joined()
        let provider = try dataURL("data:image/png," + escaped)
        #expect(provider.mediaType == "image/png")
        #expect(try await provider.data() == png)
        #expect(try await dataURL("data:,hello%20world").data() == Data("hello world".utf8))
        #expect(try await dataURL("data:text/plain;charset=utf-8,caf%C3%A9#ignored").data() == Data("café".utf8))
    }

    @Test func malformedDataURLsFailAsInvalidURLs() async throws {
        let malformed = [
            "data:image/png;base64",          // no comma
            "data:image/png;base64,QUJD*",    // not base64
            "data:;base64,QUJDQ",             // a dangling sixth of a byte
            "data:png;base64,QUJD",           // media type without a subtype
            "data:image/;base64,QUJD",        // empty subtype
        ]
        for text in malformed {
            let error = try #require(await invalidURLText(try dataURL(text)))
            #expect(error == text)
        }
        // A long URL is quoted by its start only.
        let long = "data:image/png;base64,*" + String(repeating: "A", count: 100_000)
        let quoted = try #require(await invalidURLText(try dataURL(long)))
        #expect(quoted.hasPrefix("data:image/png;base64,*"))
        #expect(quoted.utf8.count < 200)
    }

    @Test func dataURLIsCachedUnderASHA256OfTheURLNotTheURLItself() throws {
        let payload = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 131) }).base64EncodedString()
        let provider = try dataURL("data:image/png;base64," + payload)
        #expect(provider.cacheKey.hasPrefix("data-url:sha256:"))
        #expect(provider.cacheKey.utf8.count == "data-url:sha256:".utf8.count + 64)
        #expect(provider.cacheKey == (try dataURL("data:image/png;base64," + payload)).cacheKey)
        let oneCharacterChanged = (payload.first == "A" ? "B" : "A") + payload.dropFirst()
        #expect(provider.cacheKey != (try dataURL("data:image/png;base64," + oneCharacterChanged)).cacheKey)
        #expect(DataURLImageDataProvider(url: provider.url, cacheKey: "custom").cacheKey == "custom")
    }

    @Test func multiMegabyteDataURLRoundTripsThroughURLParsing() async throws {
        let bytes = Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) })
        let provider = try dataURL("data:application/octet-stream;base64," + bytes.base64EncodedString())
        #expect(try await provider.data() == bytes)
    }

    // MARK: Sources

    @Test func convertToSourceSendsFileAndDataURLsToProvidersAndTheRestToTheNetwork() throws {
        let file = URL(fileURLWithPath: "/tmp/magpie/a.png")
        guard case .provider(let fileProvider) = file.convertToSource() else { Issue.record("file: should be a provider"); return }
        #expect(fileProvider is LocalFileImageDataProvider)
        #expect(fileProvider.cacheKey == file.absoluteString)
        #expect(file.convertToSource().url == file)

        let keyed = ImageResource(downloadURL: file, cacheKey: "local-a").convertToSource()
        #expect(keyed.cacheKey == "local-a")

        let data = try #require(URL(string: "data:image/png;base64,iVBORw0KGgo="))
        guard case .provider(let dataProvider) = data.convertToSource() else { Issue.record("data: should be a provider"); return }
        #expect(dataProvider is DataURLImageDataProvider)
        #expect(dataProvider.cacheKey.hasPrefix("data-url:sha256:"))
        #expect(data.convertToSource().url == data)
        #expect(ImageResource(downloadURL: data, cacheKey: "inline").convertToSource().cacheKey == "inline")

        let https = try #require(URL(string: "https://images.example.com/a.png"))
        let resource = ImageResource(downloadURL: https, cacheKey: "remote-a")
        guard case .network(let network) = resource.convertToSource() else { Issue.record("https: should be network"); return }
        #expect(network.downloadURL == https)
        #expect(resource.convertToSource().cacheKey == "remote-a")
        #expect(resource.convertToSource().url == https)
    }

    @Test func theKeyThatComesWithASourceIsTheSourcesOwnAndOnlyAnHTTPURLBringsOne() throws {
        let http = try #require(URL(string: "http://images.example.com/a%20b.png?w=1"))
        let plain = http.convertToSourceAndKey()
        #expect(plain.cacheKey == plain.source.cacheKey)
        #expect(plain.cacheKey == http.absoluteString)
        // Another resource type keeps its own key, which the source is asked for: none comes with it.
        let keyed = ImageResource(downloadURL: http, cacheKey: "remote-a").convertToSourceAndKey()
        #expect(keyed.cacheKey == nil)
        #expect(keyed.source.cacheKey == "remote-a")
        let data = try #require(URL(string: "data:image/png;base64,iVBORw0KGgo="))
        #expect(data.convertToSourceAndKey().cacheKey == nil)
        #expect(URL(fileURLWithPath: "/tmp/magpie/a.png").convertToSourceAndKey().cacheKey == nil)
    }

    @Test func providerSourceUsesTheProvidersKeyAndContentURL() {
        let source = Source.provider(RawImageDataProvider(data: Data([1, 2, 3]), cacheKey: "raw"))
        #expect(source.cacheKey == "raw")
        #expect(source.url == nil)
    }

    @Test func onlyFileAndDataURLsGetADataProvider() throws {
        #expect(dataProvider(for: URL(fileURLWithPath: "/tmp/x.png")) is LocalFileImageDataProvider)
        #expect(dataProvider(for: try #require(URL(string: "data:,x"))) is DataURLImageDataProvider)
        #expect(dataProvider(for: try #require(URL(string: "https://example.com/x.png"))) == nil)
        #expect(dataProvider(for: try #require(URL(string: "http://example.com/x.png"))) == nil)
    }
}
