import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct CacheSerializerTests {
    static let registry = ImageCoderRegistry.shared

    /// A gradient with alpha: many colours, good for checking lossy output.
    static func gradient() throws -> Image {
        Image(pixels: try TestImages.gradient(width: 64, height: 48, alpha: true))
    }

    /// Four opaque colours in blocks: survives GIF's palette exactly.
    static func blocks(width: Int = 16, height: Int = 16) throws -> Image {
        let palette: [RGBAColor] = [.white, .black, RGBAColor(red: 200, green: 30, blue: 40), RGBAColor(red: 0, green: 90, blue: 200)]
        var bytes: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let c = palette[(x / 4 + y / 4) % palette.count]
                bytes += [c.red, c.green, c.blue, c.alpha]
            }
        }
        return try Image(width: width, height: height, rgba: bytes)
    }

    /// `image` as if decoded from `format`: encoded, then decoded again.
    static func decoded(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions = .default) throws -> (Image, Data) {
        let data = try registry.encode(image, as: format, options: options)
        return (try registry.decode(data), data)
    }

    // MARK: FormatIndicatedCacheSerializer

    @Test func pngRoundTripIsLossless() throws {
        let image = try Self.gradient()
        let serializer = FormatIndicatedCacheSerializer.png
        let data = try serializer.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .png)
        let back = try serializer.image(with: data, options: .default)
        #expect(back.pixels == image.pixels)
        #expect(back.format == .png)
    }

    @Test func jpegRoundTripIsClose() throws {
        let image = Image(pixels: try TestImages.gradient(width: 64, height: 48))
        let serializer = FormatIndicatedCacheSerializer.jpeg
        let data = try serializer.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .jpeg)
        let back = try serializer.image(with: data, options: .default)
        #expect(back.pixelSize == image.pixelSize)
        #expect(TestImages.meanError(back.pixels, image.pixels) < 3)
    }

    @Test func gifRoundTripIsExactForFewColours() throws {
        let image = try Self.blocks()
        let serializer = FormatIndicatedCacheSerializer.gif
        let data = try serializer.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .gif)
        #expect(try serializer.image(with: data, options: .default).pixels == image.pixels)
    }

    @Test func losslessWebPRoundTripIsExact() throws {
        let image = try Self.gradient()
        let serializer = FormatIndicatedCacheSerializer.webp(lossless: true)
        let data = try serializer.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .webp)
        #expect(try serializer.image(with: data, options: .default).pixels == image.pixels)
    }

    @Test func lossyWebPRoundTripIsClose() throws {
        let image = Image(pixels: try TestImages.gradient(width: 64, height: 48))
        let data = try FormatIndicatedCacheSerializer.webp.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .webp)
        let back = try FormatIndicatedCacheSerializer.webp.image(with: data, options: .default)
        #expect(TestImages.meanError(back.pixels, image.pixels) < 4)
    }

    @Test func formatIndicatedSerializerIgnoresTheOriginal() throws {
        let (image, original) = try Self.decoded(Self.blocks(), as: .gif)
        let png = try FormatIndicatedCacheSerializer.png.data(with: image, original: original)
        #expect(ImageFormat(sniffing: png) == .png)
        let stale = Data("stale original bytes".utf8)
        let gif = try FormatIndicatedCacheSerializer.gif.data(with: image, original: stale)
        #expect(ImageFormat(sniffing: gif) == .gif)
        #expect(!FormatIndicatedCacheSerializer.gif.originalDataUsed)
    }

    @Test func formatIndicatedJPEGHonoursQuality() throws {
        let image = Image(pixels: try TestImages.gradient(width: 96, height: 96))
        let low = try FormatIndicatedCacheSerializer.jpeg(quality: 20).data(with: image, original: nil)
        let high = try FormatIndicatedCacheSerializer.jpeg(quality: 95).data(with: image, original: nil)
        #expect(low.count < high.count)
    }

    @Test func aFormatWithoutEncoderThrowsEncodingFailed() throws {
        let serializer = FormatIndicatedCacheSerializer(format: .heic)
        #expect(throws: MagpieError.self) { try serializer.data(with: try Self.blocks(), original: nil) }
        do {
            _ = try serializer.data(with: try Self.blocks(), original: nil)
        } catch let MagpieError.encodingFailed(reason) {
            #expect(reason == .unsupportedFormat(.heic))
        }
    }

    // MARK: DefaultCacheSerializer

    @Test func defaultSerializerKeepsPNGAsPNG() throws {
        let (image, _) = try Self.decoded(Self.gradient(), as: .png)
        let data = try DefaultCacheSerializer.default.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .png)
        #expect(try DefaultCacheSerializer.default.image(with: data, options: .default).pixels == image.pixels)
    }

    @Test func defaultSerializerReencodesJPEGAtItsQuality() throws {
        let source = Image(pixels: try TestImages.gradient(width: 96, height: 96))
        let (image, original) = try Self.decoded(source, as: .jpeg, options: .init(quality: 100))
        let low = try DefaultCacheSerializer(jpegQuality: 20).data(with: image, original: original)
        let high = try DefaultCacheSerializer(jpegQuality: 95).data(with: image, original: original)
        #expect(ImageFormat(sniffing: low) == .jpeg)
        #expect(low != original)
        #expect(low.count < high.count)
    }

    @Test func defaultSerializerKeepsWebPAsWebP() throws {
        let (image, _) = try Self.decoded(Self.gradient(), as: .webp, options: .init(lossless: true))
        let data = try DefaultCacheSerializer.default.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .webp)
        let back = try DefaultCacheSerializer.default.image(with: data, options: .default)
        #expect(back.pixelSize == image.pixelSize)
    }

    @Test func defaultSerializerStoresTheOriginalGIFBytes() throws {
        let (image, original) = try Self.decoded(Self.blocks(), as: .gif)
        #expect(image.format == .gif)
        #expect(try DefaultCacheSerializer.default.data(with: image, original: original) == original)
    }

    @Test func defaultSerializerEncodesAGIFWithoutOriginal() throws {
        let (image, _) = try Self.decoded(Self.blocks(), as: .gif)
        let data = try DefaultCacheSerializer.default.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .gif)
        #expect(try DefaultCacheSerializer.default.image(with: data, options: .default).pixels == image.pixels)
    }

    @Test func defaultSerializerReencodesAGIFWhoseSizeNoLongerMatchesTheOriginal() throws {
        let (_, original) = try Self.decoded(Self.blocks(width: 16, height: 16), as: .gif)
        var resized = try Self.blocks(width: 8, height: 8)
        resized.format = .gif
        let data = try DefaultCacheSerializer.default.data(with: resized, original: original)
        #expect(data != original)
        #expect(try DefaultCacheSerializer.default.image(with: data, options: .default).pixelSize == resized.pixelSize)
    }

    @Test func preferCacheOriginalDataStoresTheOriginalBytes() throws {
        let (image, original) = try Self.decoded(Self.gradient(), as: .jpeg)
        let serializer = DefaultCacheSerializer(preferCacheOriginalData: true)
        #expect(serializer.originalDataUsed)
        #expect(!DefaultCacheSerializer.default.originalDataUsed)
        #expect(try serializer.data(with: image, original: original) == original)
        // Without an original it still encodes.
        #expect(ImageFormat(sniffing: try serializer.data(with: image, original: nil)) == .jpeg)
    }

    @Test func imagesOfUnknownFormatAreStoredAsPNG() throws {
        let image = try Self.gradient()
        #expect(image.format == .unknown)
        let data = try DefaultCacheSerializer.default.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .png)
        #expect(try DefaultCacheSerializer.default.image(with: data, options: .default).pixels == image.pixels)
    }

    @Test func imagesOfAFormatMagpieCannotWriteAreStoredAsPNG() throws {
        var image = try Self.blocks()
        image.format = .heic
        let data = try DefaultCacheSerializer.default.data(with: image, original: nil)
        #expect(ImageFormat(sniffing: data) == .png)
    }

    @Test func anInvalidQualityIsAnEncodingError() throws {
        // Opaque: a translucent JPEG-format image would be stored as PNG, which has no quality.
        let image = Image(pixels: try TestImages.gradient(width: 16, height: 16), format: .jpeg)
        do {
            _ = try DefaultCacheSerializer(jpegQuality: 0).data(with: image, original: nil)
            Issue.record("quality 0 was accepted")
        } catch let MagpieError.encodingFailed(reason) {
            guard case .invalidOption = reason else {
                Issue.record("expected invalidOption, got \(reason)")
                return
            }
        }
    }

    @Test func decodingPassesOptionsAndReportsBadData() throws {
        let (_, data) = try Self.decoded(Self.gradient(), as: .png)
        let scaled = try DefaultCacheSerializer.default.image(with: data, options: .init(scale: 2))
        #expect(scaled.scale == 2)
        let reason = TestImages.decodingReason {
            try DefaultCacheSerializer.default.image(with: Data("not an image".utf8), options: .default)
        }
        guard case .unknownFormat = reason else {
            Issue.record("expected unknownFormat, got \(String(describing: reason))")
            return
        }
    }
}

extension CacheSerializerTests {
    @Test func translucentJPEGImagesAreStoredAsPNGSoTheirAlphaSurvives() throws {
        var pixels = try PixelBuffer(width: 8, height: 8, fill: .white)
        pixels[0, 0] = .clear
        let rounded = Image(pixels: pixels, format: .jpeg)
        let data = try DefaultCacheSerializer.default.data(with: rounded, original: nil)
        #expect(ImageFormat(sniffing: data) == .png)
        #expect(try DefaultCacheSerializer.default.image(with: data, options: .default).pixels[0, 0].alpha == 0)
        let opaque = Image(pixels: try PixelBuffer(width: 8, height: 8, fill: .white), format: .jpeg)
        #expect(ImageFormat(sniffing: try DefaultCacheSerializer.default.data(with: opaque, original: nil)) == .jpeg)
    }
}
