import Foundation
import Testing

@testable import MagpieCore

/// Gravity placement and the processors built on it: gravity crops (smart ones too), extending, padding, trimming,
/// flattening, pixelating, sharpening and watermarks.
struct CanvasProcessorTests {
    static func solid(_ width: Int, _ height: Int, _ color: RGBAColor) throws -> PixelBuffer {
        try PixelBuffer(width: width, height: height, fill: color)
    }

    static func pixel(_ buffer: PixelBuffer, _ x: Int, _ y: Int) -> RGBAColor {
        let bytes = buffer.rgbaBytes
        let i = (y * buffer.width + x) * 4
        return RGBAColor(red: bytes[i], green: bytes[i + 1], blue: bytes[i + 2], alpha: bytes[i + 3])
    }

    static func run(_ processor: any ImageProcessor, _ pixels: PixelBuffer) throws -> PixelBuffer {
        try #require(try processor.process(item: .image(Image(pixels: pixels)), context: .default)).pixels
    }

    static let red = RGBAColor(red: 255, green: 0, blue: 0)
    static let white = RGBAColor(red: 255, green: 255, blue: 255)
    static let grey = RGBAColor(red: 128, green: 128, blue: 128)

    // MARK: Gravity

    @Test(arguments: [
        // The centre is imgproxy's: (outer − inner + 1) / 2 rounded half to even.
        (Gravity.Anchor.center, 46, 36), (.north, 46, 0), (.south, 46, 70), (.east, 90, 36), (.west, 0, 36),
        (.northEast, 90, 0), (.northWest, 0, 0), (.southEast, 90, 70), (.southWest, 0, 70),
    ])
    func anchorsPlaceTheInnerBoxAtTheirEdgeOrCorner(anchor: Gravity.Anchor, x: Int, y: Int) {
        let origin = Gravity(.anchor(anchor)).placement(outer: PixelSize(width: 100, height: 100), inner: PixelSize(width: 10, height: 30))
        #expect(origin.x == x && origin.y == y)
    }

    @Test func offsetsArePixelsFromOneUpAndFractionsBelowAndMoveInwardFromAnEdge() {
        let outer = PixelSize(width: 200, height: 100), inner = PixelSize(width: 20, height: 10)
        #expect(Gravity(.anchor(.west), offsetX: 5).placement(outer: outer, inner: inner).x == 5)
        #expect(Gravity(.anchor(.east), offsetX: 5).placement(outer: outer, inner: inner).x == 175)
        #expect(Gravity(.anchor(.west), offsetX: 0.25).placement(outer: outer, inner: inner).x == 50)
        #expect(Gravity(.anchor(.north), offsetY: 3).placement(outer: outer, inner: inner, offsetScale: 2).y == 6)
        #expect(Gravity(.anchor(.center), offsetX: 10, offsetY: -10).placement(outer: outer, inner: inner) == (100, 36))
        // Kept inside unless overflow is allowed (a watermark).
        #expect(Gravity(.anchor(.west), offsetX: -50).placement(outer: outer, inner: inner).x == 0)
        #expect(Gravity(.anchor(.west), offsetX: -50).placement(outer: outer, inner: inner, allowOverflow: true).x == -19)
        #expect(Gravity(.focusPoint(x: 0.9, y: 0.1)).placement(outer: outer, inner: inner) == (170, 5))
        #expect(Gravity(.focusPoint(x: 1, y: 1)).placement(outer: outer, inner: inner) == (180, 90))
    }

    @Test(arguments: ["ce", "no:5:0.25", "fp:0.3:0.7", "sm", "soea:-2:3"])
    func aGravitysTextFormReadsBack(text: String) throws {
        let gravity = try #require(Gravity(specText: text))
        #expect(gravity.specText == text)
    }

    // MARK: Crops

    @Test func aGravityCropKeepsTheBoxItsGravityNames() throws {
        var buffer = try Self.solid(100, 50, Self.white)
        buffer.withUnsafeMutableBytes { raw in
            for y in 0..<50 { for x in 80..<100 { raw[(y * 100 + x) * 4 + 1] = 0 } }  // a magenta strip on the right
        }
        let east = try Self.run(GravityCropProcessor(size: PixelSize(width: 20, height: 50), gravity: Gravity(.anchor(.east))), buffer)
        #expect(east.width == 20 && Self.pixel(east, 0, 0).green == 0)
        let west = try Self.run(GravityCropProcessor(size: PixelSize(width: 20, height: 50), gravity: Gravity(.anchor(.west))), buffer)
        #expect(Self.pixel(west, 19, 0).green == 255)
    }

    @Test func smartCroppingFindsTheColourfulDetailedPartOfAPlainImage() throws {
        // A grey field with a red and yellow checkerboard near its right edge.
        var buffer = try Self.solid(400, 200, Self.grey)
        buffer.withUnsafeMutableBytes { raw in
            for y in 60..<140 {
                for x in 300..<380 {
                    let yellow = (x / 8 + y / 8) % 2 == 0
                    raw[(y * 400 + x) * 4] = 255
                    raw[(y * 400 + x) * 4 + 1] = yellow ? 220 : 0
                    raw[(y * 400 + x) * 4 + 2] = 0
                }
            }
        }
        let crop = try Self.run(GravityCropProcessor(size: PixelSize(width: 150, height: 200), gravity: Gravity(.smart)), buffer)
        #expect(crop.width == 150)
        // The checkerboard is inside the crop (the crop's right part), not the centre's grey.
        #expect(Self.pixel(crop, 149, 100) != Self.grey || Self.pixel(crop, 120, 100) != Self.grey)
        let point = SmartCropping.focusPoint(in: buffer, crop: PixelSize(width: 150, height: 200))
        #expect(point.x > 0.6, "\(point)")
    }

    @Test func smartCroppingFindsASkinTonedRegionOnAPlainGround() throws {
        // A flat, skin-coloured disc low on the left of a flat blue field: only the skin term (and its edge) sees it.
        var buffer = try Self.solid(300, 300, RGBAColor(red: 60, green: 90, blue: 160))
        buffer.withUnsafeMutableBytes { raw in
            for y in 0..<300 {
                for x in 0..<300 where (x - 60) * (x - 60) + (y - 220) * (y - 220) < 40 * 40 {
                    raw[(y * 300 + x) * 4] = 224
                    raw[(y * 300 + x) * 4 + 1] = 172
                    raw[(y * 300 + x) * 4 + 2] = 138
                }
            }
        }
        let point = SmartCropping.focusPoint(in: buffer, crop: PixelSize(width: 100, height: 100))
        #expect(point.x < 0.35 && point.y > 0.6, "\(point)")
        let crop = GravityCropProcessor(size: PixelSize(width: 100, height: 100), gravity: Gravity(.smart))
        let origin = Gravity(.focusPoint(x: point.x, y: point.y)).placement(outer: buffer.pixelSize, inner: PixelSize(width: 100, height: 100))
        #expect(origin.x <= 60 && origin.x + 100 >= 60 && origin.y <= 220 && origin.y + 100 >= 220)
        #expect(try Self.run(crop, buffer).width == 100)
    }

    struct LeftFace: FocalPointDetecting {
        var identifier: String { "left-face" }
        func focalRegions(in image: Image) throws -> [FocalRegion] {
            [FocalRegion(x: 10, y: 50, width: 40, height: 40, weight: 1)]
        }
    }

    @Test func aDetectorsRegionsComeBeforeAttention() throws {
        let buffer = try Self.solid(400, 200, Self.grey)
        let point = SmartCropping.focusPoint(in: buffer, crop: PixelSize(width: 100, height: 100), detector: LeftFace())
        #expect(abs(point.x - 30.0 / 400) < 1e-9 && abs(point.y - 70.0 / 200) < 1e-9)
        let crop = GravityCropProcessor(size: PixelSize(width: 100, height: 100), gravity: Gravity(.smart), detector: LeftFace())
        #expect(crop.identifier.contains("detector=left-face"))
    }

    // MARK: Canvas

    @Test func extendingGrowsOnlyTheSidesThatAreShorterAndPlacesTheImageByGravity() throws {
        let image = try Self.solid(40, 20, Self.red)
        let extended = try Self.run(ExtendingImageProcessor(size: PixelSize(width: 100, height: 10), gravity: Gravity(.anchor(.east))), image)
        #expect(extended.pixelSize == PixelSize(width: 100, height: 20))
        #expect(Self.pixel(extended, 0, 0).alpha == 0 && Self.pixel(extended, 99, 0) == Self.red && Self.pixel(extended, 60, 10) == Self.red)
        #expect(try Self.run(ExtendingImageProcessor(size: PixelSize(width: 0, height: 0)), image) == image)
    }

    @Test func paddingAddsTransparentOrColouredSpaceOnEachSide() throws {
        let image = try Self.solid(10, 10, Self.red)
        let padded = try Self.run(PaddingImageProcessor(insets: EdgeInsets(top: 1, right: 2, bottom: 3, left: 4), background: Self.white), image)
        #expect(padded.pixelSize == PixelSize(width: 16, height: 14))
        #expect(Self.pixel(padded, 3, 1) == Self.white && Self.pixel(padded, 4, 1) == Self.red && Self.pixel(padded, 13, 10) == Self.red)
        #expect(Self.pixel(padded, 14, 10) == Self.white && Self.pixel(padded, 4, 11) == Self.white)
    }

    @Test func trimmingCutsAUniformBorderAndKeepsSpecksOfNoiseOut() throws {
        var image = try Self.solid(60, 40, Self.white)
        image.withUnsafeMutableBytes { raw in
            for y in 10..<30 { for x in 5..<45 { raw[(y * 60 + x) * 4] = 0 } }  // cyan box at x 5..<45, y 10..<30
            raw[(2 * 60 + 58) * 4 + 2] = 0  // one stray yellow pixel in the border
        }
        let trimmed = try Self.run(TrimmingImageProcessor(threshold: 10), image)
        #expect(trimmed.pixelSize == PixelSize(width: 40, height: 20))
        let equal = try Self.run(TrimmingImageProcessor(threshold: 10, equalHorizontal: true, equalVertical: true), image)
        // Margins 5 | 15 and 10 | 10: the smaller one cut from both sides.
        #expect(equal.pixelSize == PixelSize(width: 50, height: 20))
        // A transparent border is trimmed when the colour is magenta, as imgproxy documents.
        var clear = try PixelBuffer(width: 20, height: 20, fill: .clear)
        clear.withUnsafeMutableBytes { raw in for y in 5..<10 { for x in 5..<10 { raw[(y * 20 + x) * 4 + 3] = 255 } } }
        let magenta = RGBAColor(red: 255, green: 0, blue: 255)
        #expect(try Self.run(TrimmingImageProcessor(threshold: 10, color: magenta), clear).pixelSize == PixelSize(width: 5, height: 5))
    }

    @Test func flatteningMakesEveryPixelOpaqueOverTheBackground() throws {
        let half = try Self.solid(4, 4, RGBAColor(red: 0, green: 0, blue: 0, alpha: 128))
        let flat = try Self.run(FlatteningImageProcessor(background: Self.white), half)
        #expect(flat.isOpaque)
        #expect(abs(Int(Self.pixel(flat, 0, 0).red) - 127) <= 1)
    }

    @Test func flatteningOntoATranslucentBackgroundComposesSourceOverIt() throws {
        var image = try Self.solid(4, 4, .clear)
        image[0, 0] = RGBAColor(red: 0, green: 0, blue: 255, alpha: 255)
        image[1, 0] = RGBAColor(red: 0, green: 0, blue: 0, alpha: 128)
        let processor = FlatteningImageProcessor(background: RGBAColor(red: 255, green: 0, blue: 0, alpha: 128))
        #expect(processor.identifier == "flatten:ff000080")
        let flat = try Self.run(processor, image)
        #expect(Self.pixel(flat, 0, 0) == RGBAColor(red: 0, green: 0, blue: 255, alpha: 255), "opaque pixels stay")
        #expect(Self.pixel(flat, 3, 3) == RGBAColor(red: 255, green: 0, blue: 0, alpha: 128), "clear ones become the background")
        // Half black over half red: alpha 0.5 + 0.5 × 0.5 = 0.75, red (0.25 of 1) / 0.75 = 1/3 of full red.
        let mixed = Self.pixel(flat, 1, 0)
        #expect(abs(Int(mixed.alpha) - 191) <= 1 && abs(Int(mixed.red) - 85) <= 1 && mixed.green == 0 && mixed.blue == 0)
    }

    @Test func pixelatingMakesUniformBlocksOfTheirAverage() throws {
        var image = try Self.solid(8, 8, Self.white)
        image.withUnsafeMutableBytes { raw in for y in 0..<4 { for x in 0..<2 { raw[(y * 8 + x) * 4 + 1] = 0 } } }
        let blocks = try Self.run(PixelateImageProcessor(size: 4), image)
        #expect(Self.pixel(blocks, 0, 0) == Self.pixel(blocks, 3, 3))
        #expect(Self.pixel(blocks, 0, 0).green == 128 && Self.pixel(blocks, 4, 0) == Self.white)
    }

    @Test func sharpeningDeepensAnEdgeWithoutMovingFlatAreas() throws {
        var image = try Self.solid(40, 10, RGBAColor(red: 100, green: 100, blue: 100))
        image.withUnsafeMutableBytes { raw in
            for y in 0..<10 { for x in 20..<40 { for c in 0..<3 { raw[(y * 40 + x) * 4 + c] = 160 } } }
        }
        let sharp = try Self.run(SharpenImageProcessor(sigma: 1.5), image)
        #expect(Self.pixel(sharp, 19, 5).red < 100 && Self.pixel(sharp, 20, 5).red > 160)
        #expect(Self.pixel(sharp, 2, 5).red == 100 && Self.pixel(sharp, 37, 5).red == 160)
    }

    @Test func aWatermarkIsDrawnAtItsGravityOpacityAndScale() throws {
        let mark = Image(pixels: try Self.solid(10, 10, Self.red))
        let base = try Self.solid(100, 50, Self.white)
        let corner = try Self.run(WatermarkImageProcessor(
            watermark: mark, named: "red", opacity: 1, placement: .gravity(Gravity(.anchor(.southEast), offsetX: 5, offsetY: 5))), base)
        // 5 pixels in from the bottom-right corner: x 85..<95, y 35..<45.
        #expect(Self.pixel(corner, 85, 35) == Self.red && Self.pixel(corner, 94, 44) == Self.red)
        #expect(Self.pixel(corner, 84, 34) == Self.white && Self.pixel(corner, 95, 45) == Self.white)
        let faint = try Self.run(WatermarkImageProcessor(watermark: mark, named: "red", opacity: 0.5), base)
        #expect(abs(Int(Self.pixel(faint, 50, 25).green) - 128) <= 1)
        let scaled = try Self.run(WatermarkImageProcessor(watermark: mark, named: "red", opacity: 1, scale: 0.5), base)
        // Fitted into half the image (50 × 25): 25 × 25, centred at x 38..<63.
        #expect(Self.pixel(scaled, 38, 25) == Self.red && Self.pixel(scaled, 62, 25) == Self.red)
        #expect(Self.pixel(scaled, 37, 25) == Self.white && Self.pixel(scaled, 63, 25) == Self.white)
        let tiled = try Self.run(WatermarkImageProcessor(
            watermark: mark, named: "red", opacity: 1, placement: .replicate(gapX: 10, gapY: 10)), base)
        // Copies every 20 pixels, centred: the middle one covers x 45..<55.
        #expect(Self.pixel(tiled, 50, 25) == Self.red && Self.pixel(tiled, 70, 25) == Self.red && Self.pixel(tiled, 60, 25) == Self.white)
    }
}
