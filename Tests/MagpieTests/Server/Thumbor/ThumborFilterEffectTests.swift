import Foundation
@testable import MagpieServer
import Testing

@testable import MagpieCore

/// What each of thumbor's colour, focal and canvas filters does to the pixels, run through ``ThumborProcessor`` as
/// the server runs it: the direction and size of the change thumbor's filter makes, not its exact bytes.
struct ThumborFilterEffectTests {
    /// The processor for `/unsafe/{parts}/e.com/a.png`.
    static func processor(_ parts: String, watermarks: [String: Image] = [:]) throws -> ThumborProcessor {
        let request = try ServeRequest.parse(
            path: "/unsafe/\(parts)/e.com/a.png", signer: ImageURLSigner(keys: []), allowsUnsigned: true, presets: [:],
            thumborSigner: ThumborSigner(securityKey: nil))
        return ThumborProcessor(options: try #require(request.options.thumbor), watermarks: watermarks)
    }

    static func run(_ parts: String, on pixels: PixelBuffer, watermarks: [String: Image] = [:]) throws -> PixelBuffer {
        try #require(try processor(parts, watermarks: watermarks).process(item: .image(Image(pixels: pixels)), context: .default)).pixels
    }

    /// A 64×48 image whose channels stay within 96...160 (a flat, dull photo).
    static let dull: PixelBuffer = {
        var pixels = try! PixelBuffer(width: 64, height: 48)
        for y in 0..<48 {
            for x in 0..<64 {
                pixels[x, y] = RGBAColor(red: UInt8(96 + x), green: UInt8(110 + y), blue: UInt8(128 + (x + y) % 32))
            }
        }
        return pixels
    }()

    static func channel(_ pixels: PixelBuffer, _ index: Int) -> [Double] {
        stride(from: index, to: pixels.byteCount, by: 4).map { Double(pixels.rgbaBytes[$0]) }
    }

    static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    static func spread(_ values: [Double]) -> Double {
        let average = mean(values)
        return (values.map { ($0 - average) * ($0 - average) }.reduce(0, +) / Double(values.count)).squareRoot()
    }

    @Test func contrastWidensOrNarrowsTheSpreadAroundMidGrey() throws {
        let before = Self.spread(Self.channel(Self.dull, 0))
        #expect(Self.spread(Self.channel(try Self.run("filters:contrast(50)", on: Self.dull), 0)) > before * 2)
        #expect(Self.spread(Self.channel(try Self.run("filters:contrast(-50)", on: Self.dull), 0)) < before / 2)
        let flat = try Self.run("filters:contrast(-100)", on: Self.dull)
        #expect(Set(Self.channel(flat, 0)).count <= 2, "factor 0: every value at mid-grey")
    }

    @Test func rgbShiftsEachChannelsMeanBy255TimesItsPercent() throws {
        let shifted = try Self.run("filters:rgb(20,-10,0)", on: Self.dull)
        #expect(Self.mean(Self.channel(shifted, 0)) - Self.mean(Self.channel(Self.dull, 0)) == 51, "255 × 20 // 100")
        #expect(Self.mean(Self.channel(shifted, 1)) - Self.mean(Self.channel(Self.dull, 1)) == -25, "255 × −10 / 100, truncated")
        #expect(Self.channel(shifted, 2) == Self.channel(Self.dull, 2))
        #expect(Self.channel(shifted, 3) == Self.channel(Self.dull, 3), "alpha kept")
    }

    @Test func saturationZeroIsGreyAndAboveOneMoreColourful() throws {
        func chroma(_ pixels: PixelBuffer) -> Double {
            Self.mean(zip(Self.channel(pixels, 0), Self.channel(pixels, 2)).map { abs($0 - $1) })
        }
        let grey = try Self.run("filters:saturation(0)", on: Self.dull)
        #expect(chroma(grey) < 1)
        #expect(chroma(try Self.run("filters:saturation(2)", on: Self.dull)) > chroma(Self.dull) * 1.5)
    }

    @Test func equalizeSpreadsANarrowHistogramOverTheWholeRange() throws {
        let equalized = try Self.run("filters:equalize()", on: Self.dull)
        let red = Self.channel(equalized, 0)
        #expect(red.min() == 0 && red.max() == 255, "64 values in 96...159 become 0...255")
        // About as many pixels below mid-grey as above: the histogram is flattened.
        let low = red.filter { $0 < 128 }.count
        #expect(abs(Double(low) / Double(red.count) - 0.5) < 0.05)
    }

    @Test func noiseIsDeterministicPerSeedAndMovesPixels() throws {
        let once = try Self.run("filters:noise(40)", on: Self.dull)
        let again = try Self.run("filters:noise(40)", on: Self.dull)
        #expect(once.rgbaBytes == again.rgbaBytes, "the same URL gives the same bytes")
        #expect(once.rgbaBytes != Self.dull.rgbaBytes)
        #expect(try Self.run("filters:noise(40,9)", on: Self.dull).rgbaBytes != once.rgbaBytes, "another seed, other grain")
        let differences = zip(Self.channel(once, 0), Self.channel(Self.dull, 0)).map { $0 - $1 }
        #expect(differences.allSatisfy { (-20...19).contains($0) } && abs(Self.mean(differences)) < 2)
        // The same amount on all three channels: grey grain.
        #expect(zip(Self.channel(once, 1), Self.channel(Self.dull, 1)).map { $0 - $1 } == differences)
    }

    @Test func curveMapsThroughItsSplineChannelsFirstThenAll() throws {
        let inverted = try Self.run("filters:curve([(0,255),(255,0)],[],[],[])", on: Self.dull)
        #expect(inverted[10, 10].red == 255 - Self.dull[10, 10].red)
        let raised = try Self.run("filters:curve([],[(0,0),(128,200),(255,255)],[],[])", on: Self.dull)
        #expect(Self.mean(Self.channel(raised, 0)) > Self.mean(Self.channel(Self.dull, 0)) + 40)
        #expect(Self.channel(raised, 1) == Self.channel(Self.dull, 1), "the red curve leaves green alone")
        let table = ToneCurveProcessor.table([.init(x: 0, y: 0), .init(x: 128, y: 200), .init(x: 255, y: 255)])
        #expect(table[0] == 0 && table[128] == 200 && table[255] == 255 && table[64] > 100, "through its points, smoothly")
    }

    @Test func convolutionBlursWithAnAveragingKernelAndKeepsAnIdentityKernelsImage() throws {
        var edge = try PixelBuffer(width: 20, height: 20, fill: .black)
        for y in 0..<20 { for x in 10..<20 { edge[x, y] = .white } }
        let blurred = try Self.run("filters:convolution(1;2;1;2;4;2;1;2;1,3,true)", on: edge)
        #expect(blurred[9, 5].red > 0 && blurred[10, 5].red < 255, "the edge is softened")
        #expect(blurred[0, 5].red == 0 && blurred[19, 5].red == 255 && blurred[9, 5].alpha == 255, "flat areas and alpha kept")
        #expect(try Self.run("filters:convolution(0;0;0;0;1;0;0;0;0,3,false)", on: edge).rgbaBytes == edge.rgbaBytes)
        let edges = try Self.run("filters:convolution(-1;0;1,3,false)", on: edge)
        #expect(edges[9, 5].red == 255 && edges[3, 5].red == 0, "a horizontal gradient kernel finds the edge")
    }

    @Test func focalMovesTheAutomaticCropToTheRegion() throws {
        let source = try TestImages.gradient(width: 400, height: 300)
        let centred = try Self.run("100x300", on: source)
        let focused = try Self.run("100x300/filters:focal(330x100:370x140)", on: source)
        #expect(focused.pixelSize == PixelSize(width: 100, height: 300))
        // The 100-wide window centred on x = 350 is 300...400: the source's right edge.
        #expect(focused[99, 150] == source[399, 150] && focused[0, 150] == source[300, 150])
        #expect(centred[0, 150] == source[150, 150])
        let trace = try Self.processor("100x300/filters:focal(330x100:370x140)").run(Image(pixels: source), context: .default).trace
        #expect(trace.focalPoints.first == ThumborTrace.FocalPoint(
            x: 350, y: 120, weight: .int(1600), width: 40, height: 40, origin: "Explicit"))
    }

    @Test func fillAutoUsesTheMeanColourAndFillBlurTheImageItself() throws {
        let auto = try Self.run("fit-in/100x100/filters:fill(auto)", on: Self.dull)
        #expect(auto.pixelSize == PixelSize(width: 100, height: 100))
        let mean = { (index: Int) in UInt8(Self.channel(Self.dull, index).reduce(0, +) / Double(64 * 48)) }
        #expect(auto[50, 0] == RGBAColor(red: mean(0), green: mean(1), blue: mean(2)))
        var striped = try PixelBuffer(width: 80, height: 40, fill: .black)
        for y in 0..<40 { for x in 0..<40 { striped[x, y] = RGBAColor(red: 255, green: 0, blue: 0) } }
        let blurred = try Self.run("fit-in/80x80/filters:fill(blur)", on: striped)
        #expect(blurred.pixelSize == PixelSize(width: 80, height: 80))
        #expect(blurred[20, 20] == RGBAColor(red: 255, green: 0, blue: 0), "the image drawn centred: rows 20..<60")
        #expect(blurred[5, 2].red > blurred[75, 2].red && blurred[5, 2].alpha == 255, "the margin is the image, blurred and stretched")
    }

    @Test func watermarkIsDrawnWhereThumborPutsItWithItsTransparency() throws {
        let base = try PixelBuffer(width: 100, height: 80, fill: .black)
        let mark = Image(pixels: try PixelBuffer(width: 10, height: 10, fill: RGBAColor(red: 255, green: 255, blue: 255)))
        let marks = ["wm.example/m.png": mark]
        let corner = try Self.run("filters:watermark(wm.example/m.png,-5,5,0)", on: base, watermarks: marks)
        #expect(corner[85, 5] == .white && corner[94, 14] == .white && corner[95, 5] == .black && corner[84, 5] == .black,
                "x −5: the far side 5 pixels in")
        let faint = try Self.run("filters:watermark(wm.example/m.png,center,center,50)", on: base, watermarks: marks)
        #expect((120...135).contains(faint[50, 40].red) && faint[0, 0] == .black, "alpha 50: 255 − 127 left")
        let tiled = try Self.run("filters:watermark(wm.example/m.png,repeat,0,0)", on: base, watermarks: marks)
        #expect((0..<100).filter { tiled[$0, 5] == .white }.count == 100, "10 copies side by side fill the row")
        let scaled = try Self.run("filters:watermark(wm.example/m.png,0,0,0,50,none)", on: base, watermarks: marks)
        #expect(scaled[49, 49] == .white && scaled[50, 50] == .black, "fitted into half the width: 50 × 50")
        #expect(throws: MagpieError.self) { try Self.run("filters:watermark(wm.example/other.png,0,0,0)", on: base, watermarks: marks) }
    }

    @Test func autojpgWritesAnOpaquePNGResultAsJPEGOnly() throws {
        func format(_ parts: String, source: ImageFormat, alpha: Bool) throws -> ImageFormat {
            let request = try ServeRequest.parse(
                path: "/unsafe/\(parts)/e.com/a.png", signer: ImageURLSigner(keys: []), allowsUnsigned: true, presets: [:],
                thumborSigner: ThumborSigner(securityKey: nil))
            return request.options.outputFormat(accept: nil, source: source, hasAlpha: alpha, isAnimated: false).format
        }
        #expect(try format("filters:autojpg()", source: .png, alpha: false) == .jpeg)
        #expect(try format("filters:autojpg()", source: .jpeg, alpha: false) == .jpeg)
        #expect(try format("filters:autojpg()", source: .gif, alpha: false) != .jpeg, "only a PNG source, as thumbor")
        #expect(try format("filters:autojpg()", source: .png, alpha: true) == .png)
        #expect(try format("filters:autojpg(false)", source: .png, alpha: false) == .png)
        #expect(try format("filters:autojpg():format(png)", source: .png, alpha: false) == .png, "format() decides")
        #expect(try format("300x200", source: .png, alpha: false) == .png, "off by default, as AUTO_PNG_TO_JPG")
    }

    @Test func metaTraceRecordsThumborsOperationsAndNumbers() throws {
        let source = Image(pixels: try TestImages.gradient(width: 400, height: 300))
        let crop = try Self.processor("-300x200").run(source, context: .default)
        #expect(crop.trace.operations == [
            .crop(left: 0, top: 16, right: 400, bottom: 283), .resize(width: .float(300), height: .float(200)), .flipHorizontally,
        ])
        #expect(crop.image.pixelSize == PixelSize(width: 300, height: 200))
        let fit = try Self.processor("full-fit-in/100x100").run(source, context: .default)
        #expect(fit.trace.operations == [.resize(width: .int(133), height: .float(100))])
        let json = ThumborMetadata(url: .remote(URL(string: "http://e.com/a b.png")!), size: crop.image.pixelSize, frameCount: 1, trace: crop.trace).json
        // What thumbor 7.8 answers for /unsafe/meta/-300x200/… of a 400×300 image (its url quoted by Python's quote).
        #expect(json == #"{"thumbor": {"source": {"url": "http%3A//e.com/a%20b.png", "width": 300, "height": 200, "frameCount": 1}, "#
            + #""operations": [{"type": "crop", "left": 0, "top": 16, "right": 400, "bottom": 283}, {"type": "resize", "width": 300.0, "#
            + #""height": 200.0}, {"type": "flip_horizontally"}], "target": {"width": 300.0, "height": 200.0}, "focal_points": "#
            + #"[{"x": 200, "y": 150, "z": 1.0, "height": 1, "width": 1, "origin": "alignment"}]}}"#)
    }
}
