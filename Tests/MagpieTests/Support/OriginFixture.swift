import Foundation
@testable import Magpie
@testable import MagpieCore
import MagpieOrigin

/// Images the network tests serve from a local `ImageOrigin`, generated and encoded here.
enum OriginFixture {
    /// 64×48 gradient PNG (a few KB).
    static let png: Data = encode(width: 64, height: 48, as: .png)
    /// 80×60 gradient JPEG.
    static let jpeg: Data = encode(width: 80, height: 60, as: .jpeg)
    /// 256×256 noise PNG: ~260 KB that does not compress, for progress and slow transfers.
    static let noisePNG: Data = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var bytes = [UInt8](repeating: 255, count: 256 * 256 * 4)
        for i in bytes.indices where i % 4 != 3 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        let image = try! Image(width: 256, height: 256, rgba: bytes)
        return try! ImageCoderRegistry.shared.encode(image, as: .png)
    }()

    /// The assets every test origin starts with: `pic.png`, `photo.jpg`, `noise.png`,
    /// `fake.png` (HTML served as image/png) and `corrupt.png` (a PNG cut in the middle of its data).
    static var assets: [String: OriginAsset] {
        [
            "pic.png": OriginAsset(bytes: [UInt8](png), contentType: "image/png", maxAge: 600),
            "photo.jpg": OriginAsset(bytes: [UInt8](jpeg), contentType: "image/jpeg"),
            "noise.png": OriginAsset(bytes: [UInt8](noisePNG), contentType: "image/png"),
            "fake.png": OriginAsset(bytes: Array("<html><body>Not found</body></html>".utf8), contentType: "image/png"),
            "corrupt.png": OriginAsset(bytes: corruptPNG, contentType: "image/png"),
        ]
    }

    /// A PNG whose image data is overwritten with garbage (its CRCs no longer match).
    static var corruptPNG: [UInt8] {
        var bytes = [UInt8](noisePNG)
        for i in 200..<min(bytes.count, 4000) { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
        return bytes
    }

    /// Starts an origin serving `assets` (plus `extra`).
    static func start(extra: [String: OriginAsset] = [:]) async throws -> ImageOrigin {
        try await ImageOrigin.start(assets: assets.merging(extra) { _, new in new })
    }

    /// Runs `body` with a fresh origin and a downloader named `name`, then shuts both down.
    static func withOrigin(
        name: String, configuration: ImageDownloader.Configuration = .init(),
        _ body: (ImageOrigin, ImageDownloader) async throws -> Void
    ) async throws {
        let origin = try await start()
        let downloader = ImageDownloader(name: name, configuration: configuration)
        try await body(origin, downloader)
        try await downloader.shutdown()
        await origin.stop()
    }

    private static func encode(width: Int, height: Int, as format: ImageFormat) -> Data {
        let image = Image(pixels: try! TestImages.gradient(width: width, height: height))
        return try! ImageCoderRegistry.shared.encode(image, as: format)
    }
}
