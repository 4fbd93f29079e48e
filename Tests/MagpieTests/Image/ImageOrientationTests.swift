import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct ImageOrientationTests {
    /// 3x2 image whose pixel (x, y) has red = 10*x + y + 1, so every position is distinguishable.
    private func numbered() throws -> PixelBuffer {
        var bytes: [UInt8] = []
        for y in 0..<2 { for x in 0..<3 { bytes += [UInt8(10 * x + y + 1), 0, 0, 255] } }
        return try PixelBuffer(width: 3, height: 2, rgba: bytes)
    }

    private func reds(_ p: PixelBuffer) -> [[UInt8]] {
        (0..<p.height).map { y in (0..<p.width).map { x in p[x, y].red } }
    }

    @Test func everyOrientationTurnsPixelsUpright() throws {
        let source = try numbered()  // rows: [1,11,21], [2,12,22]
        let expected: [ImageOrientation: [[UInt8]]] = [
            .up: [[1, 11, 21], [2, 12, 22]],
            .upMirrored: [[21, 11, 1], [22, 12, 2]],
            .down: [[22, 12, 2], [21, 11, 1]],
            .downMirrored: [[2, 12, 22], [1, 11, 21]],
            .leftMirrored: [[1, 2], [11, 12], [21, 22]],
            .right: [[2, 1], [12, 11], [22, 21]],
            .rightMirrored: [[22, 21], [12, 11], [2, 1]],
            .left: [[21, 22], [11, 12], [1, 2]],
        ]
        for orientation in ImageOrientation.allCases {
            #expect(reds(try orientation.apply(to: source)) == expected[orientation], "\(orientation)")
        }
    }

    /// A big-endian TIFF header with one IFD entry for tag 0x0112 of the given type.
    static func exif(orientation: UInt16, type: UInt16) -> Data {
        var d: [UInt8] = Array("Exif".utf8) + [0, 0, 0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12]
        d += [UInt8(type >> 8), UInt8(type & 0xFF), 0, 0, 0, 1]
        d += type == 4 ? [0, 0, 0, UInt8(orientation)] : [0, UInt8(orientation), 0, 0]
        d += [0, 0, 0, 0]
        return Data(d)
    }

    @Test func orientationIsReadAsShortOrLong() {
        #expect(ImageOrientation(exifPayload: Self.exif(orientation: 6, type: 3)) == .right)
        #expect(ImageOrientation(exifPayload: Self.exif(orientation: 8, type: 4)) == .left)
        #expect(ImageOrientation(exifPayload: Self.exif(orientation: 9, type: 3)) == .up)
        #expect(ImageOrientation(exifPayload: Data([1, 2, 3])) == .up)
    }

    @Test func jpegWithOrientationSixDecodesRotated() throws {
        let source = try TestImages.gradient(width: 64, height: 32)
        var jpeg = try JPEGCoder().encode(Image(pixels: source), options: .init(quality: 95))
        let payload = Self.exif(orientation: 6, type: 3)
        let segment = Data([0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)]) + payload
        jpeg.insert(contentsOf: segment, at: 2)
        let image = try JPEGCoder().decode(jpeg, options: .default)
        #expect(image.width == 32 && image.height == 64)
        // Turned clockwise: the source's top-left (dark red channel) is now at the top-right.
        #expect(image.pixels[31, 0].red < 40 && image.pixels[31, 0].green < 40)
        #expect(image.pixels[0, 0].green > 200 && image.pixels[0, 0].red < 40)
        let unrotated = try JPEGCoder().decode(jpeg, options: .init(appliesOrientation: false))
        #expect(unrotated.width == 64)
    }
}
