import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct ImageCoderRegistryTests {
    @Test func emptyDataIsItsOwnReason() {
        #expect(TestImages.decodingReason { try ImageCoderRegistry.shared.decode(Data()) } == .emptyData)
    }

    @Test func nonImageBytesAreUnknownFormat() {
        let html = Data("<html><body>Not Found</body></html>".utf8)
        let reason = TestImages.decodingReason { try ImageCoderRegistry.shared.decode(html) }
        guard case .unknownFormat(let bytes) = reason else {
            Issue.record("expected unknownFormat, got \(String(describing: reason))")
            return
        }
        #expect(bytes.hasPrefix("3c 68 74 6d"))
    }

    @Test func recognisedButUndecodedFormatIsNamedAsUnsupported() {
        let bmp = Data(Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0] + [UInt8](repeating: 0, count: 40))
        let registry = ImageCoderRegistry()
        registry.unregisterCoders(for: .bmp)
        let reason = TestImages.decodingReason { try registry.decode(bmp) }
        #expect(reason == .unsupportedFormat(.bmp, detail: "no registered decoder"))
        #expect("\(MagpieError.decodingFailed(reason: reason!))".contains("unsupported format BMP"))
    }

    /// A toy coder for a made-up format: 4 bytes "MGPX", then one RGBA pixel.
    struct PixelCoder: ImageCoder {
        var format: ImageFormat { .bmp }
        func canDecode(_ data: Data) -> Bool { data.starts(with: Array("MGPX".utf8)) }
        func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
            try Image(width: 1, height: 1, rgba: Array(data.dropFirst(4).prefix(4)))
        }
    }

    @Test func registeredCodersArePluggedInAndTakePrecedence() throws {
        let registry = ImageCoderRegistry(coders: [JPEGCoder(), PNGCoder(), GIFCoder(), WebPCoder()])
        let data = Data(Array("MGPX".utf8) + [9, 8, 7, 6])
        #expect(throws: MagpieError.self) { try registry.decode(data) }
        registry.register(PixelCoder())
        #expect(try registry.decode(data).pixels[0, 0] == RGBAColor(red: 9, green: 8, blue: 7, alpha: 6))
        registry.unregisterCoders(for: .bmp)
        #expect(throws: MagpieError.self) { try registry.decode(data) }
        #expect(ImageCoderRegistry.shared.allCoders.count >= 4)
    }

    @Test func theBuiltInCodersDecodeEveryFormatAndEncodeTheSixWritableOnes() {
        let registry = ImageCoderRegistry()
        #expect(registry.decodableFormats == ImageFormat.allCases.filter { $0 != .unknown })
        #expect(registry.encodableFormats == [.jpeg, .png, .gif, .webp, .avif, .jxl])
    }

    @Test func theRegistryIsTheOneListOfWhatDecodesAndEncodes() throws {
        let registry = ImageCoderRegistry(coders: [JPEGCoder(), PNGCoder(), GIFCoder(), WebPCoder()])
        #expect(registry.decodableFormats == [.jpeg, .png, .gif, .webp])
        #expect(registry.encodableFormats == [.jpeg, .png, .gif, .webp])
        #expect(!registry.canDecode(.bmp) && !registry.canEncode(.bmp))
        // A decode-only coder: decodable from now on, still not encodable.
        registry.register(PixelCoder())
        #expect(registry.decodableFormats == [.jpeg, .png, .gif, .webp, .bmp])
        #expect(registry.canDecode(.bmp))
        #expect(!registry.canEncode(.bmp))
        #expect(registry.encodableFormats == [.jpeg, .png, .gif, .webp])
        registry.unregisterCoders(for: .webp)
        #expect(!registry.canDecode(.webp) && !registry.encodableFormats.contains(.webp))
        #expect(!ImageCoderRegistry().canDecode(.unknown))
    }

    @Test func encodingToAFormatWithoutEncoderFails() throws {
        let image = Image(pixels: try PixelBuffer(width: 2, height: 2))
        #expect(throws: MagpieError.self) { try ImageCoderRegistry.shared.encode(image, as: .heic) }
    }

    @Test func manyConcurrentDecodesAgreeWithASerialDecode() async throws {
        let registry = ImageCoderRegistry.shared
        let still = Image(pixels: try TestImages.gradient(width: 120, height: 90, alpha: true))
        let inputs = [
            try registry.encode(still, as: .png),
            try registry.encode(still, as: .jpeg, options: .init(quality: 90)),
            try registry.encode(still, as: .webp, options: .init(lossless: true)),
            try registry.encode(still, as: .gif),
        ]
        let expected = try inputs.map { try registry.decode($0).pixels }
        try await withThrowingTaskGroup(of: (Int, PixelBuffer).self) { group in
            for round in 0..<64 {
                let index = round % inputs.count
                let data = inputs[index]
                group.addTask { (index, try registry.decode(data).pixels) }
            }
            for try await (index, pixels) in group { #expect(pixels == expected[index]) }
        }
    }
}
