import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// The text form of the geometry processors: round trips, chains and errors naming the bad part.
struct ImageProcessorSpecTests {
    static let geometryProcessors: [any ImageProcessor] = [
        DownsamplingImageProcessor(size: PixelSize(width: 64, height: 48)),
        ResizingImageProcessor(referenceSize: PixelSize(width: 256, height: 256)),
        ResizingImageProcessor(referenceSize: PixelSize(width: 256, height: 128), mode: .aspectFit),
        ResizingImageProcessor(referenceSize: PixelSize(width: 20, height: 30), mode: .aspectFill),
        CroppingImageProcessor(size: PixelSize(width: 10, height: 20)),
        CroppingImageProcessor(size: PixelSize(width: 10, height: 20), anchor: .bottomRight),
        CroppingImageProcessor(size: PixelSize(width: 10, height: 20), anchor: CropAnchor(x: 0.07, y: 1)),
        RoundCornerImageProcessor(cornerRadius: 12),
        RoundCornerImageProcessor(cornerRadius: 2.75),
        RoundCornerImageProcessor(cornerRadius: .widthFraction(0.5)),
        RoundCornerImageProcessor(cornerRadius: .widthFraction(0.07)),
        RoundCornerImageProcessor(cornerRadius: .heightFraction(0.1 + 0.2)),
        RoundCornerImageProcessor(
            cornerRadius: .point(8), targetSize: PixelSize(width: 100, height: 50),
            roundingCorners: [.topLeft, .bottomRight], backgroundColor: RGBAColor(red: 1, green: 2, blue: 250, alpha: 128)),
        RoundCornerImageProcessor(cornerRadius: 3, roundingCorners: []),
        BorderImageProcessor(border: Border()),
        BorderImageProcessor(border: Border(color: .white, lineWidth: 1.5, radius: .widthFraction(0.25), roundingCorners: [.topRight])),
        FlipImageProcessor(.horizontal),
        FlipImageProcessor(.vertical),
        FlipImageProcessor(.both),
        RotationImageProcessor(degrees: 0),
        RotationImageProcessor(degrees: 90),
        RotationImageProcessor(degrees: 180),
        RotationImageProcessor(degrees: -90),
    ]

    @Test(arguments: geometryProcessors.indices)
    func geometryProcessorRoundTripsThroughItsIdentifier(index: Int) throws {
        let processor = Self.geometryProcessors[index]
        let parsed = try ImageProcessorSpec.parse(processor.identifier)
        #expect(parsed.identifier == processor.identifier)
        #expect(type(of: parsed) == type(of: processor))
    }

    @Test func parsedProcessorsCarryTheirParameters() throws {
        let resize = try #require(try ImageProcessorSpec.parse("resize:256x128:fit") as? ResizingImageProcessor)
        #expect(resize.referenceSize == PixelSize(width: 256, height: 128) && resize.mode == .aspectFit)
        let crop = try #require(try ImageProcessorSpec.parse("crop:10x20:0.25,1") as? CroppingImageProcessor)
        #expect(crop.size == PixelSize(width: 10, height: 20) && crop.anchor == CropAnchor(x: 0.25, y: 1))
        let round = try #require(try ImageProcessorSpec.parse("round:50%:size=40x30:corners=tl,br:bg=ff000080") as? RoundCornerImageProcessor)
        #expect(round.cornerRadius == .widthFraction(0.5) && round.targetSize == PixelSize(width: 40, height: 30))
        #expect(round.roundingCorners == [.topLeft, .bottomRight])
        #expect(round.backgroundColor == RGBAColor(red: 255, green: 0, blue: 0, alpha: 128))
        let border = try #require(try ImageProcessorSpec.parse("border:2.5:00ff00:radius=12.5%h") as? BorderImageProcessor)
        #expect(border.border == Border(color: RGBAColor(red: 0, green: 255, blue: 0), lineWidth: 2.5, radius: .heightFraction(0.125)))
        let flip = try #require(try ImageProcessorSpec.parse("flip:hv") as? FlipImageProcessor)
        #expect(flip.direction == .both)
        let rotate = try #require(try ImageProcessorSpec.parse("rotate:-90") as? RotationImageProcessor)
        #expect(rotate.identifier == "rotate:270")
    }

    @Test func canonicalIdentifiers() {
        #expect(ResizingImageProcessor(referenceSize: PixelSize(width: 256, height: 256), mode: .aspectFit).identifier == "resize:256x256:fit")
        #expect(ResizingImageProcessor(referenceSize: PixelSize(width: 8, height: 4)).identifier == "resize:8x4:none")
        #expect(CroppingImageProcessor(size: PixelSize(width: 3, height: 4), anchor: .topLeft).identifier == "crop:3x4:topleft")
        #expect(RoundCornerImageProcessor(cornerRadius: 12).identifier == "round:12")
        #expect(RoundCornerImageProcessor(cornerRadius: .widthFraction(0.5)).identifier == "round:50%")
        #expect(BorderImageProcessor(border: Border()).identifier == "border:4:000000ff")
        #expect(FlipImageProcessor(.both).identifier == "flip:hv")
        #expect(RotationImageProcessor(degrees: -450).identifier == "rotate:270")
    }

    @Test func aliasesParseToTheCanonicalForm() throws {
        #expect(try ImageProcessorSpec.parse("resize:10x10").identifier == "resize:10x10:none")
        #expect(try ImageProcessorSpec.parse("resize:10x10:stretch").identifier == "resize:10x10:none")
        #expect(try ImageProcessorSpec.parse("RESIZE:10X10:Fill").identifier == "resize:10x10:fill")
        #expect(try ImageProcessorSpec.parse("crop:5x5").identifier == "crop:5x5:center")
        #expect(try ImageProcessorSpec.parse("crop:5x5:1,0").identifier == "crop:5x5:topright")
        #expect(try ImageProcessorSpec.parse("round:12.0:corners=all").identifier == "round:12")
        #expect(try ImageProcessorSpec.parse("round:1e1:bg=#FFFFFF").identifier == "round:10:bg=ffffffff")
        #expect(try ImageProcessorSpec.parse("round:25%w").identifier == "round:25%")
        #expect(try ImageProcessorSpec.parse("flip:vh").identifier == "flip:hv")
    }

    @Test func chainsParseLeftToRight() throws {
        let chain = try #require(try ImageProcessorSpec.parse("resize:256x256:fit|round:12") as? ChainedImageProcessor)
        #expect(chain.processors.count == 2)
        #expect(chain.processors[0] is ResizingImageProcessor && chain.processors[1] is RoundCornerImageProcessor)
        #expect(chain.identifier == "resize:256x256:fit|round:12")
        #expect(try ImageProcessorSpec.parse(" flip:h | rotate:90 |crop:2x2 ").identifier == "flip:h|rotate:90|crop:2x2:center")
    }

    @Test func parsedChainProcessesInOrder() throws {
        // Rotating first then cropping the top-left 1x1 keeps what was the bottom-left pixel.
        var pixels = try PixelBuffer(width: 3, height: 2, fill: .white)
        pixels[0, 1] = RGBAColor(red: 255, green: 0, blue: 0)
        let processor = try ImageProcessorSpec.parse("rotate:90|crop:1x1:topleft")
        let out = try #require(try processor.process(item: .image(Image(pixels: pixels)), context: .default))
        #expect(out.pixelSize == PixelSize(width: 1, height: 1) && out.pixels[0, 0] == RGBAColor(red: 255, green: 0, blue: 0))
    }

    @Test func emptySpecIsTheDefaultProcessor() throws {
        let processor = try ImageProcessorSpec.parse("")
        #expect(processor is DefaultImageProcessor && processor.identifier == "")
    }

    @Test(arguments: [
        ("nope:1", "nope:1"),
        ("resize", "resize"),
        ("resize:0x10", "resize:0x10"),
        ("resize:abcx10", "resize:abcx10"),
        ("resize:10x10:fit:extra", "resize:10x10:fit:extra"),
        ("resize:10x10:sideways", "resize:10x10:sideways"),
        ("round:4:shape=square", "round:4:shape=square"),
        ("round:-4", "round:-4"),
        ("round:abc%", "round:abc%"),
        // Too many digits for a Double: it reads as infinity, whose identifier `round:inf%` would not parse back
        // (the spec fuzzer's finding).
        ("round:" + String(repeating: "8", count: 400) + "%", "round:" + String(repeating: "8", count: 400) + "%"),
        ("round:" + String(repeating: "9", count: 400) + "%h", "round:" + String(repeating: "9", count: 400) + "%h"),
        ("round:4:corners=tl,middle", "round:4:corners=tl,middle"),
        ("border:2", "border:2"),
        ("border:2:red", "border:2:red"),
        ("crop:4x4:middle", "crop:4x4:middle"),
        ("crop:4x4:2,0", "crop:4x4:2,0"),
        ("flip:diagonal", "flip:diagonal"),
        ("rotate:45", "rotate:45"),
        ("rotate", "rotate"),
        ("flip:h||rotate:90", ""),
        ("resize:8x8:fit|rotate:45", "rotate:45"),
    ])
    func invalidSpecNamesTheBadPart(spec: String, part: String) {
        let error = #expect(throws: MagpieError.self) { try ImageProcessorSpec.parse(spec) }
        guard case .processingFailed(.invalidSpecification(let named, let message)) = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(named == part)
        #expect(!message.isEmpty)
    }

    @Test(arguments: [0.07, 0.1 + 0.2, 1e-5, 123456.789, 2.5e-10, 1.0 / 3])
    func percentagesReadBackExactly(fraction: Double) throws {
        let text = CornerRadius.widthFraction(fraction).specText
        #expect(!text.contains("e"))
        #expect(CornerRadius(specText: text) == .widthFraction(fraction))
    }

    @Test func decimalTextIsPlainAndShortest() {
        #expect(DecimalText.format(12) == "12")
        #expect(DecimalText.format(-0.5) == "-0.5")
        #expect(DecimalText.format(1e-5) == "0.00001")
        #expect(DecimalText.format(0.075, shiftedBy: 2) == "7.5")
        #expect(DecimalText.format(1.5e20) == "150000000000000000000")
        #expect(DecimalText.shifted("12", by: -3) == "0.012")
        #expect(DecimalText.shifted("1.2.3", by: 0) == nil && DecimalText.shifted("x", by: 0) == nil)
    }

    @Test func grammarListsEveryGeometryProcessor() {
        for name in ["downsample:", "resize:", "crop:", "round:", "border:", "flip:", "rotate:"] {
            #expect(ImageProcessorSpec.grammar.contains("  " + name), "\(name)")
        }
    }

    @Test func processorNamesListEveryNameTheParserKnowsAliasesIncluded() throws {
        let names = ImageProcessorSpec.processorNames
        #expect(names.starts(with: ["downsample", "resize", "crop"]))
        #expect(names.contains("bw") && names.contains("gray") && names.contains("blend"))
        for name in names {
            #expect(ImageProcessorSpec.grammar.contains("  " + name) || name == "bw", "\(name)")
        }
        let unknown = #expect(throws: MagpieError.self) { try ImageProcessorSpec.parse("frobnicate:3") }
        #expect(unknown.map { "\($0)" }?.contains("known: " + names.filter { $0 != "bw" }.joined(separator: ", ")) == true)
    }
}
