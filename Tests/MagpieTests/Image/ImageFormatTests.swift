import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct ImageFormatTests {
    @Test(arguments: [
        ([0xFF, 0xD8, 0xFF, 0xE0], ImageFormat.jpeg),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], .png),
        (Array("GIF89a".utf8), .gif),
        (Array("GIF87a".utf8), .gif),
        (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
        ([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8), .heic),
        ([0, 0, 0, 0x1C] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("avifmif1miaf".utf8), .avif),
        (Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0], .bmp),
        ([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], .tiff),
        ([0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8], .tiff),
        ([0, 0, 1, 0, 1, 0, 16, 16], .ico),
        (Array("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8), .svg),
        (Array("  <svg width=\"1\"></svg>".utf8), .svg),
        (Array("<!DOCTYPE html><html><body>404</body></html>".utf8), .unknown),
        ([0x00, 0x01, 0x02], .unknown),
        ([], .unknown),
    ] as [([UInt8], ImageFormat)])
    func formatIsSniffedFromLeadingBytes(bytes: [UInt8], expected: ImageFormat) {
        #expect(ImageFormat(sniffing: Data(bytes)) == expected)
        #expect(Data(bytes).mg.imageFormat == expected)
    }

    @Test(.enabled(if: SVGCoderTests.hasGzip))
    func gzipDataIsSVGOnlyWhenItInflatesToAnSVGDocument() throws {
        let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>"#.utf8)
        #expect(ImageFormat(sniffing: try SVGCoderTests.gzipped(svg)) == .svg)
        #expect(ImageFormat(sniffing: try SVGCoderTests.gzipped(Data("<html><body>no</body></html>".utf8))) == .unknown)
        #expect(ImageFormat(sniffing: try SVGCoderTests.gzipped(try SVGCoderTests.gzipped(svg))) == .unknown)
        #expect(ImageFormat(sniffing: Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3])) == .unknown)
    }

    @Test func fileExtensionIsNeverTrustedOverBytes() throws {
        let png = try ImageCoderRegistry.shared.encode(Image(pixels: try TestImages.gradient(width: 8, height: 8)), as: .png)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let lying = folder.appendingPathComponent("photo.jpg")
        try png.write(to: lying)
        let image = try ImageCoderRegistry.shared.decode(try Data(contentsOf: lying))
        #expect(image.format == .png)
    }

    @Test func extensionsMapToOutputFormats() {
        #expect(ImageFormat(fileExtension: "JPG") == .jpeg)
        #expect(ImageFormat(fileExtension: "webp") == .webp)
        #expect(ImageFormat(fileExtension: "txt") == nil)
        #expect(ImageFormat.jpeg.mimeType == "image/jpeg")
    }
}
