import Foundation
import Testing

@testable import MagpieCore

/// A JPEG asked for sRGB is converted row by row while it decodes (beside the decoding on a second thread when
/// large): the pixels must be exactly those of converting the whole stored image afterwards.
struct JPEGRowConversionTests {
    let registry = ImageCoderRegistry.shared

    /// A `width`×`height` Display P3 JPEG of varied colours (its ICC profile built from the CICP code points).
    static func displayP3JPEG(width: Int, height: Int, orientation: Int = 1) throws -> Data {
        var pixels = try PixelBuffer(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                pixels[x, y] = RGBAColor(
                    red: UInt8((x * 3 + y) & 255), green: UInt8((x * y / 64) & 255), blue: UInt8((255 - y / 3) & 255))
            }
        }
        let plain = try ImageCoderRegistry.shared.encode(Image(pixels: pixels), as: .jpeg, options: .init(quality: 90))
        let icc = try #require(ColorConverter.iccForEmbedding(ColorManagementTests.displayP3))
        let exif = orientation == 1 ? nil : Data(WebPCoderTests.exifPayload(orientation: orientation))
        return JPEGSegments.inserting(icc: icc, exif: exif, xmp: nil, into: plain)
    }

    static var sRGB: ImageDecodingOptions {
        var options = ImageDecodingOptions.default
        options.colorSpace = .sRGB
        return options
    }

    @Test("converted while decoding = converted afterwards", arguments: [
        // Past a megapixel (a second thread), a small one (on the decoding thread), DCT-scaled, and 1/8 of a baseline
        // file (the fast eighth-scale decoder), which is converted once decoded.
        (1100, 1000, nil), (300, 200, nil), (1100, 1000, PixelSize(width: 600, height: 600)),
        (1100, 1000, PixelSize(width: 100, height: 100)),
    ] as [(Int, Int, PixelSize?)])
    func rowsConvertedWhileDecodingMatchTheWholeImageConvertedAfterwards(width: Int, height: Int, target: PixelSize?)
        throws
    {
        let data = try Self.displayP3JPEG(width: width, height: height)
        var plain = ImageDecodingOptions.default
        plain.targetSize = target
        var srgb = Self.sRGB
        srgb.targetSize = target
        let stored = try registry.decode(data, options: plain)
        #expect(stored.colorProfile?.iccData != nil)
        let afterwards = ColorConverter.convertedToSRGB(stored)
        let whileDecoding = try registry.decode(data, options: srgb)
        #expect(whileDecoding.colorProfile == nil)
        #expect(whileDecoding.pixels.width == afterwards.pixels.width && whileDecoding.pixels.height == afterwards.pixels.height)
        #expect(whileDecoding.pixels != stored.pixels, "nothing was converted")
        #expect(whileDecoding.pixels == afterwards.pixels)
    }

    @Test func anOrientedJPEGIsConvertedAndTurnedUpright() throws {
        let data = try Self.displayP3JPEG(width: 1100, height: 1000, orientation: 6)
        let stored = try registry.decode(data)
        #expect(stored.pixels.width == 1000)
        #expect(try registry.decode(data, options: Self.sRGB).pixels == ColorConverter.convertedToSRGB(stored).pixels)
    }

    @Test func aTruncatedJPEGAskedForSRGBFailsWithATypedError() throws {
        // The decode fails halfway, while the second thread is converting: it is stopped before the pixels go.
        let data = try Self.displayP3JPEG(width: 1100, height: 1000)
        for cut in [data.count / 2, data.count * 9 / 10] {
            #expect {
                try registry.decode(data.prefix(cut), options: Self.sRGB)
            } throws: { error in
                guard case .decodingFailed(reason: .truncatedData)? = error as? MagpieError else { return false }
                return true
            }
        }
    }

    @Test func anSRGBJPEGAskedForSRGBIsLeftAsDecoded() throws {
        var pixels = try PixelBuffer(width: 64, height: 48, fill: RGBAColor(red: 30, green: 140, blue: 220))
        pixels[3, 3] = RGBAColor(red: 250, green: 10, blue: 10)
        var image = Image(pixels: pixels)
        image.colorProfile = ColorProfile(cicp: .sRGB)
        let data = try registry.encode(image, as: .jpeg)
        #expect(try registry.decode(data, options: Self.sRGB).pixels == registry.decode(data).pixels)
    }
}
