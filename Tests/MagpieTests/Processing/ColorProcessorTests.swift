import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// Pixel-level behaviour of blur, tint, colour controls, greyscale, overlay and blend, and
/// their text form.
struct ColorProcessorTests {
    let context = ImageProcessingContext.default
    static let orange = RGBAColor(red: 200, green: 100, blue: 50)

    func run(_ processor: any ImageProcessor, _ pixels: PixelBuffer) throws -> PixelBuffer {
        try #require(try processor.process(item: .image(Image(pixels: pixels)), context: context)).pixels
    }

    /// One row of the given colours.
    static func row(_ colors: [RGBAColor]) throws -> PixelBuffer {
        try PixelBuffer(width: colors.count, height: 1, rgba: colors.flatMap { [$0.red, $0.green, $0.blue, $0.alpha] })
    }

    static func expectClose(_ actual: RGBAColor, _ expected: RGBAColor, tolerance: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) {
        let a = [actual.red, actual.green, actual.blue, actual.alpha], e = [expected.red, expected.green, expected.blue, expected.alpha]
        let close = zip(a, e).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
        #expect(close, "\(actual) is not within \(tolerance) of \(expected)", sourceLocation: sourceLocation)
    }

    static func invalidParameter(_ body: () throws -> Any?) -> Bool {
        do {
            _ = try body()
            return false
        } catch MagpieError.processingFailed(reason: .invalidParameter) {
            return true
        } catch {
            return false
        }
    }

    // MARK: Blur

    @Test(arguments: [RGBAColor(red: 12, green: 200, blue: 90), RGBAColor(red: 12, green: 200, blue: 90, alpha: 160)])
    func blurKeepsUniformImageUniform(color: RGBAColor) throws {
        let out = try run(BlurImageProcessor(blurRadius: 4), try PixelBuffer(width: 37, height: 23, fill: color))
        for y in 0..<out.height { for x in 0..<out.width { Self.expectClose(out[x, y], color) } }
    }

    @Test func blurKeepsTheMeanOfARandomImage() throws {
        var seed: UInt32 = 12345
        let bytes = (0..<(96 * 80 * 4)).map { i -> UInt8 in
            seed = seed &* 1_103_515_245 &+ 12345
            return i % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: seed >> 16)
        }
        let source = try PixelBuffer(width: 96, height: 80, rgba: bytes)
        let out = try run(BlurImageProcessor(blurRadius: 3), source)
        func mean(_ p: PixelBuffer, _ channel: Int) -> Double {
            let b = p.rgbaBytes
            return Double(stride(from: channel, to: b.count, by: 4).reduce(0) { $0 + Int(b[$1]) }) / Double(p.width * p.height)
        }
        for channel in 0..<3 { #expect(abs(mean(out, channel) - mean(source, channel)) <= 1) }
        // The noise itself must be smoothed away (σ 3 leaves about a 15th of its spread).
        #expect(TestImages.meanError(out, try PixelBuffer(width: 96, height: 80, fill: RGBAColor(red: 128, green: 128, blue: 128))) < 10)
    }

    /// Variance of `values` around index `center`, weighting each index by its value.
    static func secondMoment(_ values: [Double], center: Int) -> Double {
        let total = values.reduce(0, +)
        return values.enumerated().reduce(0) { $0 + $1.element * Double(($1.offset - center) * ($1.offset - center)) } / total
    }

    @Test(arguments: [2.0, 5.0, 10.0])
    func blurSpreadsADotIntoAGaussianOfThatSigma(radius: Double) throws {
        // One white dot in a black line, horizontal then vertical: 1-D, so even σ = 10 leaves
        // peaks far above the 8-bit rounding.
        let n = 201, center = 100
        for vertical in [false, true] {
            var line = try PixelBuffer(width: vertical ? 1 : n, height: vertical ? n : 1, fill: .black)
            line[vertical ? 0 : center, vertical ? center : 0] = .white
            let out = try run(BlurImageProcessor(blurRadius: radius), line)
            let values = (0..<n).map { Double(out[vertical ? 0 : $0, vertical ? $0 : 0].red) }
            let sigma = Self.secondMoment(values, center: center).squareRoot()
            #expect(abs(sigma - radius) <= 0.15 * radius, "measured σ \(sigma) for radius \(radius)")
            for d in 1...30 { #expect(abs(values[center - d] - values[center + d]) <= 1) }
            #expect(values[center] == values.max())
        }
    }

    @Test func blurSpreadsADotSymmetricallyInTwoDimensions() throws {
        var image = try PixelBuffer(width: 41, height: 41, fill: .black)
        image[20, 20] = .white
        let out = try run(BlurImageProcessor(blurRadius: 2), image)
        #expect(out[20, 20].red >= 8)  // 255 / (2π·4) ≈ 10
        for d in 1...6 {
            let ring = [out[20 - d, 20], out[20 + d, 20], out[20, 20 - d], out[20, 20 + d]].map { Int($0.red) }
            #expect(ring.max()! - ring.min()! <= 1)
        }
        let columns = (0..<41).map { x in Double((0..<41).reduce(0) { $0 + Int(out[x, $1].red) }) }
        let rows = (0..<41).map { y in Double((0..<41).reduce(0) { $0 + Int(out[$1, y].red) }) }
        for sums in [columns, rows] {
            #expect(abs(Self.secondMoment(sums, center: 20).squareRoot() - 2) <= 0.3)
        }
    }

    @Test func blurOfOpaqueWhiteNextToTransparencyHasNoDarkFringe() throws {
        var source = try PixelBuffer(width: 20, height: 8, fill: .clear)
        for y in 0..<8 { for x in 0..<10 { source[x, y] = .white } }
        let out = try run(BlurImageProcessor(blurRadius: 2), source)
        var darkest = RGBAColor.white
        for y in 0..<8 {
            for x in 0..<20 where out[x, y].alpha > 0 && out[x, y].red < darkest.red { darkest = out[x, y] }
        }
        #expect(min(darkest.red, darkest.green, darkest.blue) >= 254, "dark fringe: \(darkest)")
        // The edge itself is soft: half covered at the boundary, fading on either side.
        #expect(abs(Int(out[9, 4].alpha) + Int(out[10, 4].alpha) - 255) <= 2)
        #expect(out[7, 4].alpha > out[9, 4].alpha && out[9, 4].alpha > out[10, 4].alpha && out[10, 4].alpha > out[12, 4].alpha)
    }

    @Test func blurRadiusZeroIsTheIdentity() throws {
        let source = try TestImages.gradient(width: 17, height: 9, alpha: true)
        #expect(try run(BlurImageProcessor(blurRadius: 0), source) == source)
    }

    @Test(arguments: [-1.0, .nan, .infinity])
    func blurRejectsABadRadius(radius: Double) throws {
        let image = Image(pixels: try PixelBuffer(width: 2, height: 2))
        #expect(Self.invalidParameter { try BlurImageProcessor(blurRadius: radius).process(item: .image(image), context: context) })
    }

    @Test func blurProcessesEveryFrameAndKeepsTiming() throws {
        let frames = [
            ImageFrame(pixels: try PixelBuffer(width: 8, height: 8, fill: .white), duration: .milliseconds(70)),
            ImageFrame(pixels: try PixelBuffer(width: 8, height: 8, fill: Self.orange), duration: .milliseconds(120)),
        ]
        let animated = try Image(frames: frames, loopCount: 3, format: .gif, scale: 2)
        let out = try #require(try BlurImageProcessor(blurRadius: 1.5).process(item: .image(animated), context: context))
        #expect(out.frames.map(\.duration) == [.milliseconds(70), .milliseconds(120)])
        #expect(out.loopCount == 3 && out.format == .gif && out.scale == 2)
        Self.expectClose(out.frames[1].pixels[4, 4], Self.orange)
    }

    // MARK: Tint, overlay, grey

    @Test func tintPaintsAtItsAlphaOnlyWhereTheImageIs() throws {
        let tint = RGBAColor(red: 0, green: 0, blue: 255, alpha: 128)
        let out = try run(TintImageProcessor(tint: tint), try Self.row([Self.orange, RGBAColor(red: 200, green: 100, blue: 50, alpha: 64), .clear]))
        // a = 128/255: R 200(1-a) = 99.6, G 100(1-a) = 49.8, B 255a + 50(1-a) = 152.9.
        Self.expectClose(out[0, 0], RGBAColor(red: 100, green: 50, blue: 153, alpha: 255))
        Self.expectClose(out[1, 0], RGBAColor(red: 100, green: 50, blue: 153, alpha: 64))
        #expect(out[2, 0].alpha == 0)
    }

    @Test func overlayKeepsFractionOfTheImage() throws {
        let source = try Self.row([Self.orange, RGBAColor(red: 200, green: 100, blue: 50, alpha: 90)])
        let blue = RGBAColor(red: 0, green: 0, blue: 255)
        let out = try run(OverlayImageProcessor(overlay: blue, fraction: 0.25), source)
        // 0.25 image + 0.75 blue: R 50, G 25, B 12.5 + 191.25 = 203.75.
        Self.expectClose(out[0, 0], RGBAColor(red: 50, green: 25, blue: 204))
        Self.expectClose(out[1, 0], RGBAColor(red: 50, green: 25, blue: 204, alpha: 90))
        #expect(try run(OverlayImageProcessor(overlay: blue, fraction: 1), source) == source)
        Self.expectClose(try run(OverlayImageProcessor(overlay: blue, fraction: 0), source)[1, 0], RGBAColor(red: 0, green: 0, blue: 255, alpha: 90))
        // Half-transparent blue at 0.5 weighs 0.25: R 150, G 75, B 37.5 + 63.75 = 101.25.
        let half = RGBAColor(red: 0, green: 0, blue: 255, alpha: 128)
        Self.expectClose(try run(OverlayImageProcessor(overlay: half), source)[0, 0], RGBAColor(red: 150, green: 75, blue: 101), tolerance: 1)
    }

    @Test func grayUsesRec709Luma() throws {
        let source = try Self.row([
            RGBAColor(red: 255, green: 0, blue: 0), RGBAColor(red: 0, green: 255, blue: 0),
            RGBAColor(red: 0, green: 0, blue: 255), RGBAColor(red: 10, green: 20, blue: 30, alpha: 77),
        ])
        let out = try run(BlackWhiteProcessor(), source)
        // 0.2126·255 = 54.2, 0.7152·255 = 182.4, 0.0722·255 = 18.4, 2.126 + 14.304 + 2.166 = 18.6.
        let expected: [(UInt8, UInt8)] = [(54, 255), (182, 255), (18, 255), (19, 77)]
        for (x, (v, a)) in expected.enumerated() {
            Self.expectClose(out[x, 0], RGBAColor(red: v, green: v, blue: v, alpha: a))
        }
    }

    // MARK: Colour controls

    @Test func colorControlsIdentityLeavesPixelsAlone() throws {
        let source = try TestImages.gradient(width: 32, height: 16, alpha: true)
        let out = try run(ColorControlsProcessor(brightness: 0, contrast: 1, saturation: 1, inputEV: 0), source)
        let a = source.rgbaBytes, b = out.rgbaBytes
        #expect(zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= 1 })
    }

    @Test func colorControlsApplyEachAdjustment() throws {
        let grey = try Self.row([RGBAColor(red: 100, green: 200, blue: 128, alpha: 99)])
        func apply(_ b: Double, _ c: Double, _ s: Double, _ ev: Double, to source: PixelBuffer) throws -> RGBAColor {
            try run(ColorControlsProcessor(brightness: b, contrast: c, saturation: s, inputEV: ev), source)[0, 0]
        }
        // Brightness +0.2 adds 51; alpha stays.
        Self.expectClose(try apply(0.2, 1, 1, 0, to: grey), RGBAColor(red: 151, green: 251, blue: 179, alpha: 99))
        // Contrast 1.5 around 127.5: 86.25, 236.25, 128.25.
        Self.expectClose(try apply(0, 1.5, 1, 0, to: grey), RGBAColor(red: 86, green: 236, blue: 128, alpha: 99))
        // Saturation 0: all channels become the luma, 21.26 + 143.04 + 9.24 = 173.54.
        Self.expectClose(try apply(0, 1, 0, 0, to: grey), RGBAColor(red: 174, green: 174, blue: 174, alpha: 99))
        // One stop doubles (and clamps): 200, 400 → 255, 256 → 255.
        Self.expectClose(try apply(0, 1, 1, 1, to: grey), RGBAColor(red: 200, green: 255, blue: 255, alpha: 99))
        // All four, in order, on (60, 90, 30): EV -1 → (30, 45, 15); luma 6.378 + 32.184 + 1.083 = 39.645;
        // saturation 2 → 2c - luma = (20.355, 50.355, -9.645); +0.1 (25.5) → (45.855, 75.855, 15.855);
        // contrast 1.2 → (c - 127.5)·1.2 + 127.5 = (29.53, 65.53, -6.47 → 0).
        let mixed = try Self.row([RGBAColor(red: 60, green: 90, blue: 30)])
        Self.expectClose(try apply(0.1, 1.2, 2, -1, to: mixed), RGBAColor(red: 30, green: 66, blue: 0))
    }

    @Test(arguments: [(-1.5, 1.0, 1.0, 0.0), (0, -0.1, 1, 0), (0, 1, -1, 0), (0, 1, 1, Double.nan)])
    func colorControlsRejectBadParameters(b: Double, c: Double, s: Double, ev: Double) throws {
        let image = Image(pixels: try PixelBuffer(width: 2, height: 2))
        let processor = ColorControlsProcessor(brightness: b, contrast: c, saturation: s, inputEV: ev)
        #expect(Self.invalidParameter { try processor.process(item: .image(image), context: context) })
    }

    // MARK: Blend

    @Test func blendMultiplyAndScreenOfTwoKnownColours() throws {
        let source = try Self.row([Self.orange])
        let background = RGBAColor(red: 128, green: 255, blue: 64)
        // Multiply: 200·128/255 = 100.4, 100·255/255 = 100, 50·64/255 = 12.55.
        let multiplied = try run(BlendImageProcessor(blendMode: .multiply, backgroundColor: background), source)
        Self.expectClose(multiplied[0, 0], RGBAColor(red: 100, green: 100, blue: 13))
        // Screen: a + b - ab/255 = 227.6, 255, 101.45.
        let screened = try run(BlendImageProcessor(blendMode: .screen, backgroundColor: background), source)
        Self.expectClose(screened[0, 0], RGBAColor(red: 228, green: 255, blue: 101))
    }

    @Test func blendAlphaMixesWithTheBackground() throws {
        let source = try Self.row([Self.orange])
        // Half opacity over opaque (0, 0, 255): (100, 50, 25 + 127.5).
        let normal = try run(BlendImageProcessor(blendMode: .normal, alpha: 0.5, backgroundColor: RGBAColor(red: 0, green: 0, blue: 255)), source)
        Self.expectClose(normal[0, 0], RGBAColor(red: 100, green: 50, blue: 153))
        // No background: only the opacity applies, whatever the mode.
        let bare = try run(BlendImageProcessor(blendMode: .difference, alpha: 0.5), source)
        Self.expectClose(bare[0, 0], RGBAColor(red: 200, green: 100, blue: 50, alpha: 128))
        // Half-transparent red over half-transparent blue (normal): alpha 0.5 + 0.5·0.5 = 0.75,
        // red 0.5/0.75 = 2/3 → 170, blue 0.25/0.75 = 1/3 → 85.
        let red = try Self.row([RGBAColor(red: 255, green: 0, blue: 0, alpha: 128)])
        let stacked = try run(BlendImageProcessor(blendMode: .normal, backgroundColor: RGBAColor(red: 0, green: 0, blue: 255, alpha: 128)), red)
        Self.expectClose(stacked[0, 0], RGBAColor(red: 170, green: 0, blue: 85, alpha: 191))
    }

    /// The W3C separable blend functions, per channel in Double: a reference independent of
    /// the SIMD code under test.
    static func reference(_ mode: BlendMode, _ b: Double, _ s: Double) -> Double {
        func hard(_ b: Double, _ s: Double) -> Double { s <= 0.5 ? b * 2 * s : b + (2 * s - 1) - b * (2 * s - 1) }
        switch mode {
        case .normal: return s
        case .multiply: return b * s
        case .screen: return b + s - b * s
        case .overlay: return hard(s, b)
        case .darken: return min(b, s)
        case .lighten: return max(b, s)
        case .colorDodge: return b == 0 ? 0 : s == 1 ? 1 : min(1, b / (1 - s))
        case .colorBurn: return b == 1 ? 1 : s == 0 ? 0 : 1 - min(1, (1 - b) / s)
        case .hardLight: return hard(b, s)
        case .softLight:
            if s <= 0.5 { return b - (1 - 2 * s) * b * (1 - b) }
            let d = b <= 0.25 ? ((16 * b - 12) * b + 4) * b : b.squareRoot()
            return b + (2 * s - 1) * (d - b)
        case .difference: return abs(b - s)
        case .exclusion: return b + s - 2 * b * s
        }
    }

    @Test(arguments: BlendMode.allCases)
    func blendModeMatchesTheW3CFormula(mode: BlendMode) throws {
        // Channels chosen to hit both branches of the piecewise modes, and the 0 and 1 ends.
        let sources: [UInt8] = [30, 200, 128, 0, 255, 90]
        let backdrops: [UInt8] = [60, 180, 250, 40, 10, 0]
        let pixels = try Self.row([
            RGBAColor(red: sources[0], green: sources[1], blue: sources[2]),
            RGBAColor(red: sources[3], green: sources[4], blue: sources[5]),
        ])
        let out = try run(BlendImageProcessor(blendMode: mode, backgroundColor: RGBAColor(red: 60, green: 180, blue: 250)), pixels)
        let second = try run(BlendImageProcessor(blendMode: mode, backgroundColor: RGBAColor(red: 40, green: 10, blue: 0)), pixels)
        let got = [out[0, 0].red, out[0, 0].green, out[0, 0].blue, second[1, 0].red, second[1, 0].green, second[1, 0].blue]
        for i in 0..<6 {
            let expected = Self.reference(mode, Double(backdrops[i]) / 255, Double(sources[i]) / 255) * 255
            #expect(abs(Double(got[i]) - expected) <= 1, "\(mode) channel \(i): \(got[i]) vs \(expected)")
        }
    }

    @Test func blendRejectsAlphaOutsideUnitRange() throws {
        let image = Image(pixels: try PixelBuffer(width: 2, height: 2))
        #expect(Self.invalidParameter { try BlendImageProcessor(blendMode: .normal, alpha: 1.5).process(item: .image(image), context: context) })
    }

    @Test func processorsDecodeDataFirst() throws {
        let png = try ImageCoderRegistry.shared.encode(Image(pixels: try Self.row([Self.orange])), as: .png)
        let out = try #require(try TintImageProcessor(tint: .black).process(item: .data(png), context: context))
        #expect(out.pixels[0, 0] == .black)
    }

    // MARK: Text form

    static let processors: [any ImageProcessor] = [
        BlurImageProcessor(blurRadius: 4), BlurImageProcessor(blurRadius: 0.75), BlurImageProcessor(blurRadius: 0.1 + 0.2),
        BlurImageProcessor(blurRadius: 12.5e-6),
        TintImageProcessor(tint: RGBAColor(red: 1, green: 2, blue: 250, alpha: 128)),
        ColorControlsProcessor(brightness: 0.1, contrast: 1.2, saturation: 1, inputEV: 0),
        ColorControlsProcessor(brightness: -0.3, contrast: 0.5, saturation: 1.75, inputEV: -1.5),
        BlackWhiteProcessor(),
        OverlayImageProcessor(overlay: .white), OverlayImageProcessor(overlay: .black, fraction: 0.3),
        BlendImageProcessor(blendMode: .multiply), BlendImageProcessor(blendMode: .colorDodge, alpha: 0.25),
        BlendImageProcessor(blendMode: .softLight, alpha: 1, backgroundColor: RGBAColor(red: 9, green: 8, blue: 7, alpha: 6)),
    ]

    @Test(arguments: processors.indices)
    func processorRoundTripsThroughItsIdentifier(index: Int) throws {
        let processor = Self.processors[index]
        let parsed = try ImageProcessorSpec.parse(processor.identifier)
        #expect(parsed.identifier == processor.identifier)
        #expect(type(of: parsed) == type(of: processor))
    }

    @Test func canonicalIdentifiersAndAliases() throws {
        #expect(BlurImageProcessor(blurRadius: 4).identifier == "blur:4")
        #expect(TintImageProcessor(tint: RGBAColor(red: 255, green: 0, blue: 0, alpha: 128)).identifier == "tint:ff000080")
        #expect(ColorControlsProcessor(brightness: 0.1, contrast: 1.2, saturation: 1, inputEV: 0).identifier == "color:0.1:1.2:1:0")
        #expect(BlendImageProcessor(blendMode: .colorDodge).identifier == "blend:colordodge:1")
        #expect(try ImageProcessorSpec.parse("bw").identifier == "gray")
        #expect(try ImageProcessorSpec.parse("blur:2.50").identifier == "blur:2.5")
        #expect(try ImageProcessorSpec.parse("color:0.1").identifier == "color:0.1:1:1:0")
        #expect(try ImageProcessorSpec.parse("overlay:#FF0000").identifier == "overlay:ff0000ff:0.5")
        #expect(try ImageProcessorSpec.parse("blend:ColorBurn:0.5:bg=000000").identifier == "blend:colorburn:0.5:bg=000000ff")
        let blend = try #require(try ImageProcessorSpec.parse("blend:hardlight:bg=ffffff80") as? BlendImageProcessor)
        #expect(blend.blendMode == .hardLight && blend.alpha == 1 && blend.backgroundColor == RGBAColor(red: 255, green: 255, blue: 255, alpha: 128))
        #expect(try ImageProcessorSpec.parse("blur:3|gray").identifier == "blur:3|gray")
    }

    @Test(arguments: [
        "blur", "blur:abc", "blur:-1", "blur:nan", "blur:2:3", "tint", "tint:zz", "tint:ff00", "color", "color:2",
        "color:0:-1", "color:0:1:1:x", "gray:1", "overlay:ff0000:1.5", "overlay:red", "blend", "blend:nosuchmode",
        "blend:multiply:2", "blend:normal:1:bg=xyz", "blend:normal:foo=1",
    ])
    func badArgumentIsAnInvalidSpecification(text: String) {
        do {
            _ = try ImageProcessorSpec.parse(text)
            Issue.record("\(text) parsed")
        } catch MagpieError.processingFailed(reason: .invalidSpecification(let part, _)) {
            #expect(part == text)
        } catch {
            Issue.record("\(text): unexpected \(error)")
        }
    }
}
