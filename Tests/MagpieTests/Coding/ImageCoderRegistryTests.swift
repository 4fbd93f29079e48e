import Foundation
import Synchronization
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

    @Test(arguments: [
        (ImageFormat.jpeg, 1, 65_501, "1x65501 exceeds JPEG's 65500 rows"),
        (.webp, 16_384, 1, "16384x1 exceeds WebP's 16383 columns"),
        (.gif, 65_536, 1, "65536x1 exceeds GIF's 65535 columns"),
    ])
    func anImageTooLargeForTheFormatIsRefusedBeforeTheEncoderRuns(format: ImageFormat, width: Int, height: Int, message: String) throws {
        let image = Image(pixels: try TestImages.gradient(width: width, height: height))
        let error = try #require(throws: MagpieError.self) { try ImageCoderRegistry.shared.encode(image, as: format) }
        let limit = try #require(ImageCoderRegistry.shared.allCoders.first { $0.format == format && $0.canEncode }?.largestEncodableSize)
        #expect(error == .encodingFailed(reason: .sizeNotEncodable(format, size: image.pixelSize, limit: limit)))
        #expect(error.description.contains(message), "\(error)")
        // At the limit the encoder is called and writes the file.
        let fitting = Image(pixels: try TestImages.gradient(width: min(width, limit.width), height: min(height, limit.height)))
        #expect(try !ImageCoderRegistry.shared.encode(fitting, as: format).isEmpty)
    }

    @Test(arguments: [ImageFormat.jpeg, .png, .gif, .webp])
    func anEncoderStopsBetweenRowsOnceItsCallerCancels(format: ImageFormat) throws {
        let image = Image(pixels: try TestImages.gradient(width: 64, height: 1024))
        // False for the check before the encoder starts, true from then on: only the encoder's own checks can stop it.
        let asked = Mutex(0)
        let error = try #require(throws: MagpieError.self) {
            try ImageCoderRegistry.shared.encode(image, as: format, isCancelled: {
                asked.withLock { count in
                    count += 1
                    return count > 1
                }
            })
        }
        #expect(error == .processingFailed(reason: .cancelled), "\(format): \(error)")
        #expect(asked.withLock { $0 } > 1)
        // Never cancelled: the same bytes as without a check, and the check is gone from the thread afterwards.
        let plain = try ImageCoderRegistry.shared.encode(image, as: format)
        #expect(try ImageCoderRegistry.shared.encode(image, as: format, isCancelled: { false }) == plain)
        #expect(try ImageCoderRegistry.shared.encode(image, as: format) == plain)
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

    @Test func everyBuiltInCoderDeclaresItsOwnFactsAndRecognisesWhatItWrites() throws {
        let image = try Image(width: 4, height: 3, rgba: [UInt8](repeating: 200, count: 48))
        for coder in ImageCoderRegistry.builtInCoders {
            let traits = coder.traits
            #expect(traits == ImageCoderRegistry().traits(for: coder.format) && !traits.displayName.isEmpty)
            #expect(ImageFormat(fileExtension: traits.fileExtension) == coder.format)
            #expect(traits.mimeType.hasPrefix("image/"))
            if coder.canEncode {
                let data = try coder.encode(image, options: .default)
                #expect(data.withUnsafeBytes(coder.recognizes) && ImageFormat(sniffing: data) == coder.format)
                #expect(try ImageCoderRegistry.shared.header(of: data).format == coder.format)
            }
        }
    }

    @Test func acceptNegotiatesAVIFOverWebPOnEqualWeightsAndJPEGXLOnlyForItsOwnSources() {
        let registry = ImageCoderRegistry()
        #expect(registry.negotiatedFormats == [.avif, .webp, .jxl])
        #expect(registry.negotiableFormats(for: .jpeg) == [.avif, .webp])
        #expect(registry.negotiableFormats(for: .jxl) == [.avif, .webp, .jxl])
        let both = AcceptHeader("image/webp,image/avif,image/jxl")
        #expect(registry.acceptedFormat(both, source: .jpeg) == .avif)
        #expect(registry.acceptedFormat(AcceptHeader("image/webp,image/avif;q=0.5"), source: .jpeg) == .webp)
        #expect(registry.acceptedFormat(AcceptHeader("image/jxl"), source: .jpeg) == nil)
        #expect(registry.acceptedFormat(AcceptHeader("image/jxl"), source: .jxl) == .jxl)
        // The first tier wins over JPEG XL whatever the weights.
        #expect(registry.acceptedFormat(AcceptHeader("image/jxl, image/webp;q=0.1"), source: .jxl) == .webp)
        #expect(registry.acceptedFormat(AcceptHeader("image/*, */*"), source: .jpeg) == nil)
        registry.unregisterCoders(for: .avif)
        #expect(registry.acceptedFormat(both, source: .jpeg) == .webp)
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
