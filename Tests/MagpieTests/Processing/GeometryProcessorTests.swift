import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// Pixel-level behaviour of resize, crop, round, border, flip and rotate.
struct GeometryProcessorTests {
    let context = ImageProcessingContext.default
    static let red = RGBAColor(red: 255, green: 0, blue: 0)
    static let blue = RGBAColor(red: 0, green: 0, blue: 255)

    /// An opaque image whose pixel (x, y) is (x, y, 7): every pixel says where it came from.
    static func coordinates(width: Int, height: Int) throws -> PixelBuffer {
        var bytes: [UInt8] = []
        for y in 0..<height { for x in 0..<width { bytes += [UInt8(x), UInt8(y), 7, 255] } }
        return try PixelBuffer(width: width, height: height, rgba: bytes)
    }

    static func origin(of color: RGBAColor) -> (Int, Int) { (Int(color.red), Int(color.green)) }

    func run(_ processor: any ImageProcessor, _ pixels: PixelBuffer) throws -> PixelBuffer {
        try #require(try processor.process(item: .image(Image(pixels: pixels)), context: context)).pixels
    }

    // MARK: Resize

    @Test(arguments: [(ContentMode.none, 100, 100), (.aspectFit, 100, 50), (.aspectFill, 200, 100)])
    func resizeModeGivesExactSize(mode: ContentMode, width: Int, height: Int) throws {
        let source = try TestImages.gradient(width: 400, height: 200)
        let out = try run(ResizingImageProcessor(referenceSize: PixelSize(width: 100, height: 100), mode: mode), source)
        #expect(out.width == width && out.height == height)
    }

    @Test func resizeEnlargesWhenFitting() throws {
        let out = try run(ResizingImageProcessor(referenceSize: PixelSize(width: 100, height: 100), mode: .aspectFit),
                          try TestImages.gradient(width: 40, height: 20))
        #expect(out.width == 100 && out.height == 50)
    }

    @Test func resizeKeepsUniformColourUniform() throws {
        let colour = RGBAColor(red: 12, green: 200, blue: 90, alpha: 160)
        let out = try run(ResizingImageProcessor(referenceSize: PixelSize(width: 37, height: 81)),
                          try PixelBuffer(width: 120, height: 50, fill: colour))
        #expect(out.width == 37 && out.height == 81)
        let bytes = out.rgbaBytes
        let expected: [UInt8] = [12, 200, 90, 160]
        for i in bytes.indices { #expect(abs(Int(bytes[i]) - Int(expected[i % 4])) <= 1) }
    }

    // MARK: Crop

    @Test(arguments: [
        (CropAnchor.center, 3, 3), (.top, 3, 0), (.bottom, 3, 6), (.left, 0, 3), (.right, 6, 3),
        (.topLeft, 0, 0), (.topRight, 6, 0), (.bottomLeft, 0, 6), (.bottomRight, 6, 6),
        (CropAnchor(x: 0.25, y: 1), 2, 6),
    ])
    func cropTakesPixelsAtAnchor(anchor: CropAnchor, x: Int, y: Int) throws {
        let source = try Self.coordinates(width: 10, height: 8)
        let out = try run(CroppingImageProcessor(size: PixelSize(width: 4, height: 2), anchor: anchor), source)
        #expect(out.width == 4 && out.height == 2)
        for j in 0..<2 {
            for i in 0..<4 { #expect(Self.origin(of: out[i, j]) == (x + i, y + j), "pixel \(i),\(j)") }
        }
    }

    @Test func cropLargerThanImageIsClampedToIt() throws {
        let source = try Self.coordinates(width: 10, height: 8)
        let out = try run(CroppingImageProcessor(size: PixelSize(width: 30, height: 3), anchor: .bottom), source)
        #expect(out.width == 10 && out.height == 3)
        #expect(Self.origin(of: out[0, 0]) == (0, 5) && Self.origin(of: out[9, 2]) == (9, 7))
    }

    // MARK: Round corners

    @Test func roundCornersClearCornersAndKeepCentre() throws {
        let out = try run(RoundCornerImageProcessor(cornerRadius: 10), try PixelBuffer(width: 40, height: 40, fill: Self.red))
        for (x, y) in [(0, 0), (39, 0), (0, 39), (39, 39), (1, 1)] { #expect(out[x, y].alpha == 0, "\(x),\(y)") }
        for (x, y) in [(20, 20), (20, 0), (0, 20), (39, 20), (20, 39), (10, 10)] { #expect(out[x, y] == Self.red, "\(x),\(y)") }
        // Anti-aliasing: the arc has partly covered pixels, and they keep their colour.
        var partial = 0
        for y in 0..<10 {
            for x in 0..<10 where out[x, y].alpha > 0 && out[x, y].alpha < 255 {
                partial += 1
                #expect(out[x, y].red == 255 && out[x, y].blue == 0)
            }
        }
        #expect(partial >= 8)
    }

    @Test func roundOnlyTheChosenCorners() throws {
        let out = try run(RoundCornerImageProcessor(cornerRadius: 10, roundingCorners: [.topLeft, .bottomRight]),
                          try PixelBuffer(width: 40, height: 30, fill: Self.red))
        #expect(out[0, 0].alpha == 0 && out[39, 29].alpha == 0)
        #expect(out[39, 0] == Self.red && out[0, 29] == Self.red)
    }

    @Test func roundWithWidthFractionMakesACircle() throws {
        let out = try run(RoundCornerImageProcessor(cornerRadius: .widthFraction(0.5)),
                          try PixelBuffer(width: 40, height: 40, fill: Self.red))
        // (5, 5) is 20.5 px from the centre, (6, 6) 19.1 px: outside and inside a radius-20 circle.
        #expect(out[5, 5].alpha == 0 && out[6, 6].alpha == 255)
        #expect(out[34, 34].alpha == 0 && out[33, 33].alpha == 255)
    }

    @Test func roundBackgroundColourFillsCorners() throws {
        let out = try run(RoundCornerImageProcessor(cornerRadius: 10, backgroundColor: Self.blue),
                          try PixelBuffer(width: 40, height: 40, fill: Self.red))
        #expect(out[0, 0] == Self.blue && out[39, 39] == Self.blue)
        #expect(out[20, 20] == Self.red)
        #expect(out.isOpaque)
        let mixed = (0..<10).flatMap { y in (0..<10).map { out[$0, y] } }.filter { $0.red > 0 && $0.blue > 0 }
        #expect(!mixed.isEmpty)
    }

    @Test func roundTargetSizeFillsAndCentreCrops() throws {
        // Left half red, right half blue, 80x40: filling 20x20 scales to 40x20 and keeps the middle.
        var source = try PixelBuffer(width: 80, height: 40, fill: Self.red)
        for y in 0..<40 { for x in 40..<80 { source[x, y] = Self.blue } }
        let out = try run(RoundCornerImageProcessor(cornerRadius: 4, targetSize: PixelSize(width: 20, height: 20)), source)
        #expect(out.width == 20 && out.height == 20)
        #expect(out[2, 10].red > 240 && out[2, 10].blue < 15 && out[17, 10].blue > 240 && out[17, 10].red < 15)
        #expect(out[0, 0].alpha == 0)
    }

    // MARK: Border

    @Test func borderPixelsHaveBorderColourAndInteriorIsUntouched() throws {
        let source = try TestImages.gradient(width: 20, height: 16)
        let out = try run(BorderImageProcessor(border: Border(color: Self.blue, lineWidth: 3)), source)
        #expect(out.width == 20 && out.height == 16)
        for y in 0..<16 {
            for x in 0..<20 {
                let inBorder = x < 3 || y < 3 || x >= 17 || y >= 13
                #expect(out[x, y] == (inBorder ? Self.blue : source[x, y]), "\(x),\(y)")
            }
        }
    }

    @Test func aBorderWiderThanTheImageCoversItAllWithoutTrapping() throws {
        // `border:8888888888888888888888088888888882` trapped converting its band to Int (spec fuzzer finding).
        let source = try TestImages.gradient(width: 20, height: 16)
        for lineWidth in [10.0, 50, 1e30, Double.greatestFiniteMagnitude] {
            let out = try run(BorderImageProcessor(border: Border(color: Self.blue, lineWidth: lineWidth)), source)
            #expect((0..<16).allSatisfy { y in (0..<20).allSatisfy { out[$0, y] == Self.blue } }, "line width \(lineWidth)")
        }
        let spec = try ImageProcessorSpec.parse("round:8|border:8888888888888888888888088888888882:0000ff|blur:0|gray")
        #expect(try spec.process(item: .image(Image(pixels: source)), context: .default)?.width == 20)
    }

    @Test func borderWithFractionalWidthBlendsItsInnerEdge() throws {
        let out = try run(BorderImageProcessor(border: Border(color: .black, lineWidth: 2.5)),
                          try PixelBuffer(width: 20, height: 20, fill: .white))
        #expect(out[1, 10] == .black)
        #expect(abs(Int(out[2, 10].red) - 128) <= 1 && out[2, 10].alpha == 255)
        #expect(out[3, 10] == .white)
    }

    @Test func borderWithRadiusFollowsTheCornersAndClipsOutside() throws {
        let out = try run(BorderImageProcessor(border: Border(color: Self.red, lineWidth: 2, radius: .point(10))),
                          try PixelBuffer(width: 40, height: 40, fill: .white))
        #expect(out[0, 0].alpha == 0 && out[39, 39].alpha == 0)
        for (x, y) in [(20, 0), (20, 1), (0, 20), (39, 20), (20, 38)] { #expect(out[x, y] == Self.red, "\(x),\(y)") }
        #expect(out[20, 20] == .white && out[20, 2] == .white && out[5, 5] == .white)
        // On the arc, the centre of (3, 3) is 9.2 px from the corner's centre: inside the line from 8 to 10 px.
        #expect(out[3, 3].red == 255 && out[3, 3].green < 40 && out[3, 3].alpha > 200)
        let partial = (0..<10).flatMap { y in (0..<10).map { out[$0, y].alpha } }.filter { $0 > 0 && $0 < 255 }
        #expect(!partial.isEmpty)
    }

    // MARK: Flip and rotate

    @Test(arguments: [FlipDirection.horizontal, .vertical, .both])
    func flipMovesEveryPixelToItsMirror(direction: FlipDirection) throws {
        let source = try Self.coordinates(width: 5, height: 3)
        let out = try run(FlipImageProcessor(direction), source)
        for y in 0..<3 {
            for x in 0..<5 {
                let sx = direction == .vertical ? x : 4 - x, sy = direction == .horizontal ? y : 2 - y
                #expect(Self.origin(of: out[x, y]) == (sx, sy), "\(x),\(y)")
            }
        }
    }

    @Test(arguments: [90, 180, 270, -90, 450])
    func rotateMovesEveryPixelClockwise(degrees: Int) throws {
        let source = try Self.coordinates(width: 5, height: 3)
        let out = try run(RotationImageProcessor(degrees: degrees), source)
        let turns = (degrees % 360 + 360) % 360 / 90
        #expect(turns == 2 ? (out.width == 5 && out.height == 3) : (out.width == 3 && out.height == 5))
        for y in 0..<3 {
            for x in 0..<5 {
                let (tx, ty) = switch turns {
                case 1: (2 - y, x)
                case 2: (4 - x, 2 - y)
                default: (y, 4 - x)
                }
                #expect(Self.origin(of: out[tx, ty]) == (x, y), "source \(x),\(y)")
            }
        }
    }

    @Test func rotateClockwiseMovesTopLeftToTopRight() throws {
        var source = try PixelBuffer(width: 6, height: 4, fill: .white)
        source[0, 0] = Self.red
        let out = try run(RotationImageProcessor(degrees: 90), source)
        #expect(out[3, 0] == Self.red && out[0, 0] == .white)
    }

    @Test func fourQuarterTurnsAreIdentity() throws {
        let source = try TestImages.gradient(width: 7, height: 4, alpha: true)
        var pixels = source
        for _ in 0..<4 { pixels = try run(RotationImageProcessor(degrees: 90), pixels) }
        #expect(pixels == source)
        #expect(try run(RotationImageProcessor(degrees: 0), source) == source)
    }

    // MARK: Animation, data, invalid parameters

    static let everyProcessor: [any ImageProcessor] = [
        ResizingImageProcessor(referenceSize: PixelSize(width: 10, height: 10), mode: .aspectFit),
        CroppingImageProcessor(size: PixelSize(width: 6, height: 6)),
        RoundCornerImageProcessor(cornerRadius: 2),
        BorderImageProcessor(border: Border(color: .white, lineWidth: 1)),
        FlipImageProcessor(.both),
        RotationImageProcessor(degrees: 90),
    ]

    @Test(arguments: everyProcessor.indices)
    func animatedImagesAreProcessedFrameByFrame(index: Int) throws {
        let frames = [
            ImageFrame(pixels: try PixelBuffer(width: 20, height: 12, fill: Self.red), duration: .milliseconds(100)),
            ImageFrame(pixels: try PixelBuffer(width: 20, height: 12, fill: Self.blue), duration: .milliseconds(250)),
        ]
        let image = try Image(frames: frames, loopCount: 3, format: .gif, scale: 2)
        let out = try #require(try Self.everyProcessor[index].process(item: .image(image), context: context))
        #expect(out.frames.map(\.duration) == [.milliseconds(100), .milliseconds(250)])
        #expect(out.loopCount == 3 && out.format == .gif && out.scale == 2)
        let centre = (out.width / 2, out.height / 2)
        #expect(out.frames[0].pixels[centre.0, centre.1] == Self.red)
        #expect(out.frames[1].pixels[centre.0, centre.1] == Self.blue)
    }

    @Test func dataIsDecodedBeforeProcessing() throws {
        let data = try PNGCoder().encode(Image(pixels: try Self.coordinates(width: 10, height: 8)), options: .default)
        let out = try #require(try FlipImageProcessor(.horizontal).process(item: .data(data), context: context))
        #expect(Self.origin(of: out.pixels[0, 0]) == (9, 0))
    }

    static let invalidProcessors: [any ImageProcessor] = [
        ResizingImageProcessor(referenceSize: PixelSize(width: 0, height: 10)),
        CroppingImageProcessor(size: PixelSize(width: 5, height: -1)),
        CroppingImageProcessor(size: PixelSize(width: 5, height: 5), anchor: CropAnchor(x: 1.5, y: 0)),
        RotationImageProcessor(degrees: 45),
        RoundCornerImageProcessor(cornerRadius: -1),
        RoundCornerImageProcessor(cornerRadius: 4, targetSize: PixelSize(width: 0, height: 0)),
        BorderImageProcessor(border: Border(lineWidth: -2)),
    ]

    @Test(arguments: invalidProcessors.indices)
    func invalidParametersThrowInvalidParameter(index: Int) throws {
        let processor = Self.invalidProcessors[index]
        let image = Image(pixels: try PixelBuffer(width: 8, height: 8, fill: .white))
        let error = #expect(throws: MagpieError.self) { try processor.process(item: .image(image), context: context) }
        guard case .processingFailed(.invalidParameter(let name, _)) = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(name == processor.identifier)
    }
}
