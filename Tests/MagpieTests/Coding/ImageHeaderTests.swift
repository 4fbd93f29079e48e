import Foundation
import Testing

@testable import MagpieCore

/// `ImageCoderRegistry.header(of:)`: size and frames from the header, without decoding.
struct ImageHeaderTests {
    let registry = ImageCoderRegistry.shared

    func animation(frames: Int) throws -> Image {
        let list = try (0..<frames).map { i in
            ImageFrame(pixels: try TestImages.gradient(width: 37, height: 23, alpha: i % 2 == 1), duration: .milliseconds(100))
        }
        return try Image(frames: list, loopCount: 0)
    }

    @Test func headerGivesFormatSizeAndFramesOfEveryDecodableFormatAsTheDecoderWould() throws {
        let still = Image(pixels: try TestImages.gradient(width: 61, height: 29, alpha: true))
        let opaque = Image(pixels: try TestImages.gradient(width: 61, height: 29))
        let animated = try animation(frames: 4)
        let files: [(String, Data)] = [
            ("jpeg", try registry.encode(opaque, as: .jpeg)),
            ("png", try registry.encode(still, as: .png)),
            ("apng", try registry.encode(animated, as: .png)),
            ("gif", try registry.encode(animated, as: .gif)),
            ("gif still", try registry.encode(opaque, as: .gif)),
            ("webp lossy", try registry.encode(opaque, as: .webp, options: .init(quality: 80))),
            ("webp lossy alpha", try registry.encode(still, as: .webp, options: .init(quality: 80))),
            ("webp lossless", try registry.encode(still, as: .webp, options: .init(lossless: true))),
            ("webp animated", try registry.encode(animated, as: .webp, options: .init(lossless: true))),
        ]
        for (name, data) in files {
            let header = try registry.header(of: data)
            let image = try registry.decode(data, options: ImageDecodingOptions(appliesOrientation: false))
            #expect(header.format == image.format, "\(name)")
            #expect(header.width == image.width && header.height == image.height, "\(name): \(header)")
            #expect(header.frameCount == image.frames.count, "\(name): \(header)")
            #expect(header.pixelCount == image.width * image.height, "\(name)")
        }
    }

    @Test func headerNeedsNoPixelsButRefusesWhatIsNoImage() throws {
        let png = try registry.encode(Image(pixels: try TestImages.gradient(width: 300, height: 200)), as: .png)
        // IHDR alone (33 bytes) gives the size; the frame count needs the first IDAT or acTL.
        let head = try registry.header(of: png.prefix(33))
        #expect(head.width == 300 && head.height == 200 && head.frameCount == nil)
        #expect(TestImages.decodingReason { try registry.header(of: png.prefix(20)) }
            == .truncatedData(.png, message: "the header is cut short or malformed"))
        #expect(TestImages.decodingReason { try registry.header(of: Data("<html>".utf8)) }
            == .unknownFormat(leadingBytes: "3c 68 74 6d 6c 3e"))
        #expect(TestImages.decodingReason { try registry.header(of: Data()) } == .emptyData)
    }
}
