import Foundation
import MagpieOrigin
import MagpieServer
import Testing

@testable import MagpieCore

/// imgproxy's client libraries from PyPI (`scripts/imgproxy-clients`: imgproxy, pyimgproxy, mkimgproxy) build signed
/// URLs the way their users' code does; a running `magpie serve` must answer each with what imgproxy documents for it.
/// Skipped when the libraries cannot be installed (no Python venv or no PyPI).
@Suite("imgproxy's client libraries against magpie serve", .serialized, .enabled(if: ImgproxyClients.available))
struct ImgproxyClientCompatibilityTests {
    /// What imgproxy makes of each case for a 400×300 JPEG source: size and format.
    static let expected: [String: (width: Int, height: Int, type: String)] = [
        "fill-smart-webp": (300, 200, "image/webp"),
        "fit": (100, 75, "image/jpeg"),
        "width": (150, 113, "image/jpeg"),
        "padded": (120, 95, "image/jpeg"),
        "cropped": (100, 50, "image/jpeg"),
    ]

    @Test func everyURLTheClientsBuildGivesImgproxysSizeFormatAndFileName() async throws {
        let large = try ImageCoderRegistry.shared.encode(Image(pixels: try TestImages.gradient(width: 400, height: 300)), as: .jpeg)
        let assets = ["large.jpg": OriginAsset(bytes: [UInt8](large), contentType: "image/jpeg")]
        try await ServerFixture.with(extraAssets: assets) { fixture in
            let built = try ImgproxyClients.urls(
                host: "http://127.0.0.1:\(fixture.port)", key: ServerFixture.key, salt: ServerFixture.salt,
                source: fixture.origin.url("/img/large.jpg"))
            #expect(Set(built.map(\.client)) == ["imgproxy", "pyimgproxy", "mkimgproxy"])
            #expect(built.count >= 13)
            for url in built {
                let expectation = try #require(Self.expected[url.case])
                let path = String(url.url.dropFirst("http://127.0.0.1:\(fixture.port)".count))
                let answer = try await fixture.request(path)
                #expect(answer.status == 200, "\(url.client) \(url.case) \(path): \(answer.text)")
                guard answer.status == 200 else { continue }
                let image = try ImageCoderRegistry.shared.decode(answer.body)
                #expect(image.pixelSize == PixelSize(width: expectation.width, height: expectation.height), "\(url.client) \(url.case)")
                #expect(answer.header("Content-Type") == expectation.type, "\(url.client) \(url.case)")
                let ext = expectation.type == "image/webp" ? "webp" : "jpg"
                #expect(answer.header("Content-Disposition") == "inline; filename=\"large.\(ext)\"", "\(url.client) \(url.case)")
            }
        }
    }
}

/// `scripts/imgproxy-clients`, set up once per test process.
enum ImgproxyClients {
    struct BuiltURL: Decodable {
        let client: String
        let `case`: String
        let url: String
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/imgproxy-clients")

    /// Whether the venv with the clients exists or could be made (PyPI reachable).
    static let available: Bool = {
        guard let run = try? run(["--setup"], input: Data()) else { return false }
        return run.status == 0
    }()

    /// The URLs the clients build for a server at `host` signing with `key`/`salt` (hex), for `source`.
    static func urls(host: String, key: String, salt: String, source: String) throws -> [BuiltURL] {
        let request = try JSONSerialization.data(withJSONObject: ["host": host, "key": key, "salt": salt, "source": source])
        let result = try run([], input: request)
        guard result.status == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "imgproxy-clients: \(result.errors)"])
        }
        return try JSONDecoder().decode([BuiltURL].self, from: result.output)
    }

    private static func run(_ arguments: [String], input: Data) throws -> (status: Int32, output: Data, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path] + arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output, errors)
    }
}
