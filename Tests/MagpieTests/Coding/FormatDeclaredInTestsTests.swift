import Foundation
import MagpieOrigin
import MagpieServer
import Testing

@testable import Magpie
@testable import MagpieCore
@testable import magpie

/// A format Magpie's sources never name: 8 magic bytes, then width and height (UInt32, little-endian), then RGBA rows.
/// Declared here only, to prove a new format is one coder.
struct FakeFormatCoder: ImageCoder {
    static let format = ImageFormat(rawValue: "mgfk")
    static let magic: [UInt8] = Array("MGFAKE".utf8) + [0x0D, 0x0A]

    var format: ImageFormat { Self.format }
    var canEncode: Bool { true }
    var traits: FormatTraits {
        FormatTraits(
            displayName: "Magpie Fake", mimeType: "image/x-magpie-fake", fileExtensions: ["mgfk", "mgfake"],
            supportsAlpha: true, negotiation: .whenAccepted(rank: 3))
    }

    func recognizes(_ leadingBytes: UnsafeRawBufferPointer) -> Bool { leadingBytes.starts(with: Self.magic) }

    func header(of data: Data) throws -> ImageHeader {
        guard data.count >= 16 else { throw MagpieError.decodingFailed(reason: .truncatedData(format, message: "short header")) }
        let bytes = [UInt8](data.prefix(16))
        func side(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        return ImageHeader(format: format, width: side(8), height: side(12), frameCount: 1)
    }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        let header = try header(of: data)
        let rgba = [UInt8](data.dropFirst(16))
        guard rgba.count == header.width * header.height * 4 else {
            throw MagpieError.decodingFailed(reason: .truncatedData(format, message: "pixels cut short"))
        }
        var image = try Image(width: header.width, height: header.height, rgba: rgba)
        image.format = format
        return image
    }

    func encode(_ image: Image, options: ImageEncodingOptions) throws -> Data {
        func side(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        return Data(Self.magic + side(image.width) + side(image.height) + image.pixels.rgbaBytes)
    }
}

/// Item 1 of "one house": a coder declared only in Tests is sniffed, decoded, described by `magpie info`, negotiated by
/// `magpie serve` and cached, with no edit to Sources. It registers in ``ImageCoderRegistry/shared``, which every
/// suite of this process reads, so the checks run in a child process of this test binary that runs this suite alone.
@Suite struct FormatDeclaredInTestsTests {
    static let childVariable = "MAGPIE_FAKE_FORMAT_CHILD"
    static var inChild: Bool { ProcessInfo.processInfo.environment[childVariable] == "1" }

    @Test func aCoderDeclaredOnlyInTestsIsSniffedDecodedListedNegotiatedAndCached() async throws {
        guard Self.inChild else {
            try runInChild()
            return
        }
        ImageCoderRegistry.shared.register(FakeFormatCoder())
        defer { ImageCoderRegistry.shared.unregisterCoders(for: FakeFormatCoder.format) }
        try await checkEverySeam()
    }

    /// Runs this suite in a fresh process of the same test binary and expects it to pass.
    private func runInChild() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", "FormatDeclaredInTestsTests"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childVariable] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the child run failed:\n\(text)")
        // The child must have run the checks, not skipped them or matched no test.
        #expect(text.contains("aCoderDeclaredOnlyInTestsIsSniffedDecodedListedNegotiatedAndCached"), "\(text)")
    }

    private func checkEverySeam() async throws {
        let fake = FakeFormatCoder.format
        var rgba: [UInt8] = []
        for y in 0..<6 { for x in 0..<10 { rgba += [UInt8(x * 25), UInt8(y * 40), 90, 255] } }
        let image = try Image(width: 10, height: 6, rgba: rgba)
        let data = try ImageCoderRegistry.shared.encode(image, as: fake)

        // Sniffed and named.
        #expect(ImageFormat(sniffing: data) == fake)
        #expect(data.mg.imageFormat == fake)
        #expect(ImageFormat(fileExtension: "MGFAKE") == fake)
        #expect(fake.mimeType == "image/x-magpie-fake")
        #expect(fake.fileExtension == "mgfk")
        #expect("\(fake)" == "Magpie Fake")
        #expect(ImageFormat.allCases.contains(fake))
        #expect(ImageCoderRegistry.shared.decodableFormats.contains(fake))
        #expect(ConvertCommand.encodable.contains("mgfk"))

        // Decoded, and its header read.
        let decoded = try ImageCoderRegistry.shared.decode(data)
        #expect(decoded.format == fake && decoded.pixels.rgbaBytes == rgba)
        #expect(try ImageCoderRegistry.shared.header(of: data) == ImageHeader(format: fake, width: 10, height: 6, frameCount: 1))

        // Described by `magpie info`.
        let folder = try TemporaryFolder()
        defer { folder.cleanUp() }
        let file = folder.url.appendingPathComponent("picture.mgfk")
        try data.write(to: file)
        let info = try capturingStandardOutput { try InfoCommand.parse([file.path, "--json"]).run() }
        #expect(info.contains("\"format\":\"mgfk\"") && info.contains("\"width\":10") && info.contains("\"height\":6"), "\(info)")

        // Negotiated and written by `magpie serve`, then answered from its result cache.
        try await ServerFixture.with(extraAssets: ["picture.mgfk": OriginAsset(bytes: [UInt8](data), contentType: "application/octet-stream")]) {
            fixture in
            let accept = [("Accept", "image/x-magpie-fake, image/webp;q=0.9, */*;q=0.5")]
            let path = fixture.imagePath("photo.jpg", options: ["resize:fit:40:30"])
            let first = try await fixture.request(path, headers: accept)
            #expect(first.status == 200 && first.header("Content-Type") == "image/x-magpie-fake", "\(first.status) \(first.text.prefix(200))")
            #expect(first.header("Vary") == "Accept")
            #expect(ImageFormat(sniffing: first.body) == fake)
            #expect(try ImageCoderRegistry.shared.decode(first.body).pixelSize == PixelSize(width: 40, height: 30))
            let again = try await fixture.request(path, headers: accept)
            #expect(again.header("X-Magpie-Cache") == "memory" && again.body == first.body)
            // Without it in Accept, the JPEG source stays JPEG.
            let plain = try await fixture.request(path, headers: [("Accept", "image/jpeg")])
            #expect(plain.header("Content-Type") == "image/jpeg")
            // As a source: read, and written in a format every client shows.
            let source = try await fixture.request(fixture.imagePath("picture.mgfk", options: ["format:png"]))
            #expect(source.status == 200 && source.header("Content-Type") == "image/png")
            #expect(try ImageCoderRegistry.shared.decode(source.body).pixels.rgbaBytes == rgba)
            // Named by the URL's extension.
            let named = try await fixture.request(fixture.imagePath("photo.jpg", extension: "mgfk"))
            #expect(named.header("Content-Type") == "image/x-magpie-fake")
        }

        // Downloaded by the pipeline, kept on disk, and read back from there by another manager.
        let origin = try await ImageOrigin.start(assets: ["picture.mgfk": OriginAsset(bytes: [UInt8](data), contentType: "image/x-magpie-fake")])
        let downloader = ImageDownloader(name: "fake-format")
        let cacheFolder = try TemporaryFolder()
        defer { cacheFolder.cleanUp() }
        func manager() -> ImageManager {
            let cache = ImageCache(name: "fake-format", diskConfig: DiskStorage.Config(name: "fake-format", directory: cacheFolder.url))
            let manager = ImageManager(downloader: downloader, cache: cache)
            manager.defaultOptions = [.waitForCache]
            return manager
        }
        let url = URL(string: origin.url("/img/picture.mgfk"))!
        let downloaded = try await manager().retrieveImage(with: url)
        let fromDisk = try await manager().retrieveImage(with: url)
        try await downloader.shutdown()
        await origin.stop()
        #expect(downloaded.cacheType == .none && downloaded.image.format == fake)
        #expect(fromDisk.cacheType == .disk && fromDisk.image.format == fake && fromDisk.image.pixels.rgbaBytes == rgba)
    }

    /// What `body` prints on standard output (this process's file descriptor 1, through a file).
    private func capturingStandardOutput(_ body: () throws -> Void) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-stdout-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        fflush(nil)
        let saved = dup(1)
        let capture = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        dup2(capture, 1)
        close(capture)
        defer {
            fflush(nil)
            dup2(saved, 1)
            close(saved)
        }
        try body()
        fflush(nil)
        return try String(contentsOf: file, encoding: .utf8)
    }
}
