import Foundation
import MagpieOrigin
import Testing

import Magpie

/// The README's quick start, copied here with a local origin, its own manager and its own cache folder
/// (so it neither touches the network nor the user's cache): it must compile and do what the README says.
struct ReadmeQuickStartTests {
    @Test func readmeQuickStartCompilesAndBehavesAsDescribedAgainstALocalOrigin() async throws {
        let origin = try await OriginFixture.start()
        defer { Task { await origin.stop() } }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let shared = ImageManager(
            downloader: ImageDownloader(name: "readme"),
            cache: ImageCache(name: "readme", diskConfig: .init(name: "readme", directory: folder)))

        let url = URL(string: origin.url("/img/pic.png"))!
        let thumbnail = ResizingImageProcessor(referenceSize: PixelSize(width: 256, height: 256), mode: .aspectFit)
            |> RoundCornerImageProcessor(cornerRadius: 16)
        let result = try await shared.retrieveImage(with: url, options: [.processor(thumbnail)])
        let png = try ImageCoderRegistry.shared.encode(result.image, as: .png)
        let cache = ImageCache(name: "thumbs", memoryConfig: .init(totalCostLimit: 200 << 20), diskConfig: .init(name: "thumbs", directory: folder))
        let manager = ImageManager(downloader: .default, cache: cache)
        try await cache.clearDiskCache()

        #expect(result.cacheType == .none)
        #expect(result.image.width == 256 && result.image.height == 192, "the 64x48 fixture fitted into 256x256")
        #expect(result.image.frames[0].pixels[0, 0].alpha == 0, "rounded corner")
        #expect(try ImageCoderRegistry.shared.decode(png).width == 256)
        #expect(try await shared.retrieveImage(with: url, options: [.processor(thumbnail)]).cacheType == .memory)
        #expect(manager.cache === cache)
    }

    @Test func readmeMagpieCoreThumbnailSnippetMakesA256PixelJPEG() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("photo.jpg")
        try ImageCoderRegistry.shared.encode(Image(pixels: TestImages.gradient(width: 1024, height: 768)), as: .jpeg).write(to: photo)
        let out = folder.appendingPathComponent("thumb.jpg")

        let data = try Data(contentsOf: photo)
        let thumb = try DownsamplingImageProcessor(size: PixelSize(width: 256, height: 256))
            .process(item: .data(data), context: .default)!
        try ImageCoderRegistry.shared.encode(thumb, as: .jpeg).write(to: out)

        let written = try ImageCoderRegistry.shared.decode(try Data(contentsOf: out))
        #expect(written.format == .jpeg)
        #expect(written.pixelSize == PixelSize(width: 256, height: 192))
    }
}
