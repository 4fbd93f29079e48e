import MagpieServer
import Testing

/// Option segments to typed options: each option good and bad, presets, the extension, and the normalised text.
struct ServeOptionsTests {
    static let presets: [String: [String]] = [
        "thumb": ["resize:100x100:fill", "quality:70"],
        "sharp": ["format:png", "metadata:strip"],
        "nested": ["blur:1", "preset:thumb"],
        "loop": ["preset:loop"],
        "broken": ["resize:big"],
    ]

    static func parse(_ segments: [String], ext: String? = nil) throws -> ServeOptions {
        try ServeOptions.parse(segments, fileExtension: ext, presets: presets)
    }

    static func badRequest(_ segments: [String], ext: String? = nil) throws -> ServeRequestError {
        let error = try #require(throws: ServeRequestError.self) { try parse(segments, ext: ext) }
        #expect(error.status == 400)
        return error
    }

    static func identifier(_ spec: String) throws -> String { try ImageProcessorSpec.parse(spec).identifier }

    // MARK: Output options

    @Test func noSegmentsGiveTheDefaults() throws {
        let options = try Self.parse([])
        #expect(options == ServeOptions())
        #expect(options.processor.identifier == "")
        #expect(options.format == .auto)
        #expect(options.quality == nil)
        #expect(options.metadata == .none)
        #expect(options.color == .keep)
        #expect(!options.firstFrameOnly)
        #expect(options.normalized == "format:auto/quality:default/metadata:none/color:keep/frames:all")
    }

    @Test(arguments: [
        ("format:png", RequestedFormat.fixed(.png)), ("format:JPG", .fixed(.jpeg)), ("format:jpeg", .fixed(.jpeg)),
        ("format:webp", .fixed(.webp)), ("format:avif", .fixed(.avif)), ("format:gif", .fixed(.gif)),
        ("format:jxl", .fixed(.jxl)), ("format:auto", .auto),
    ])
    func formatSetsTheRequestedFormat(segment: String, format: RequestedFormat) throws {
        #expect(try Self.parse([segment]).format == format)
    }

    @Test(arguments: ["format:bmp", "format:tiff", "format:heic", "format:svg", "format:xyz", "format:", "format:png:x"])
    func formatRefusesUnwritableUnknownAndMalformedValues(segment: String) throws {
        let error = try Self.badRequest([segment])
        #expect(error.message.contains("format"))
    }

    @Test func anUnwritableFormatIsNamedAndTheWritableOnesListed() throws {
        let error = try Self.badRequest(["format:bmp"])
        #expect(error.message.contains("\"bmp\""))
        #expect(error.message.contains("writable: jpeg, png"))
    }

    @Test(arguments: [("quality:1", 1), ("quality:100", 100), ("quality:85", 85), ("quality:007", 7)])
    func qualityAcceptsWholeNumbersFrom1To100(segment: String, quality: Int) throws {
        #expect(try Self.parse([segment]).quality == quality)
    }

    @Test(arguments: ["quality:101", "quality:abc", "quality:5.5", "quality:-1", "quality:+5", "quality:", "quality:5:6"])
    func qualityRefusesEverythingElse(segment: String) throws {
        _ = try Self.badRequest([segment])
    }

    @Test func qualityZeroIsTheDefaultAsInImgproxy() throws {
        #expect(try Self.parse(["quality:70", "q:0"]).quality == nil)
    }

    @Test(arguments: [
        ("metadata:none", ImageEncodingOptions.MetadataPolicy.none), ("metadata:keep", .keep), ("metadata:STRIP", .strip),
    ])
    func metadataMapsToTheEncodersPolicy(segment: String, policy: ImageEncodingOptions.MetadataPolicy) throws {
        #expect(try Self.parse([segment]).metadata == policy)
    }

    @Test func metadataRefusesOtherValues() throws {
        _ = try Self.badRequest(["metadata:all"])
        _ = try Self.badRequest(["metadata:"])
    }

    @Test func colorKeepAndSRGBAreTheOutputOptionAndOtherColorSegmentsTheColourControlsProcessor() throws {
        #expect(try Self.parse(["color:srgb"]).color == .srgb)
        #expect(try Self.parse(["color:srgb", "color:keep"]).color == .keep)
        let controls = try Self.parse(["color:0.1:1.2"])
        #expect(controls.color == .keep)
        #expect(controls.processor.identifier == (try Self.identifier("color:0.1:1.2")))
        let error = try Self.badRequest(["color:purple"])
        #expect(error.message.contains("color:purple"))
    }

    @Test func framesFirstAndAllSetFirstFrameOnly() throws {
        #expect(try Self.parse(["frames:first"]).firstFrameOnly)
        #expect(try !Self.parse(["frames:first", "frames:all"]).firstFrameOnly)
        _ = try Self.badRequest(["frames:some"])
        _ = try Self.badRequest(["frames:"])
    }

    @Test func anOutputOptionGivenTwiceTakesTheLastValue() throws {
        let options = try Self.parse(["quality:50", "format:png", "quality:80", "format:webp"])
        #expect(options.quality == 80)
        #expect(options.format == .fixed(.webp))
    }

    @Test func outputOptionNamesAreCaseInsensitive() throws {
        let options = try Self.parse(["FORMAT:PNG", "Quality:60", "Frames:First"])
        #expect(options == ServeOptions(format: .fixed(.png), quality: 60, firstFrameOnly: true))
    }

    // MARK: Processors

    @Test func processorsChainInURLOrderAndRepeatWhenGivenTwice() throws {
        let options = try Self.parse(["resize:256x256:fit", "blur:2", "round:12", "blur:2"])
        #expect(options.processor.identifier == (try Self.identifier("resize:256x256:fit|blur:2|round:12|blur:2")))
    }

    @Test func aSingleProcessorIsNotWrappedInAChain() throws {
        let options = try Self.parse(["blur:2"])
        #expect(options.processor is BlurImageProcessor)
    }

    @Test func anOptionWithoutArgumentsIsWrittenWithATrailingColon() throws {
        #expect(try Self.parse(["gray:"]).processor.identifier == "gray")
        #expect(try Self.parse(["bw:"]).processor.identifier == "gray")
        #expect(try Self.parse(["round:12:"]).processor.identifier == (try Self.identifier("round:12")))
    }

    @Test func aPipeInASegmentIsRefused() throws {
        let error = try Self.badRequest(["resize:10x10|blur:2"])
        #expect(error.message.contains("resize:10x10|blur:2"))
        #expect(error.message.contains("one processor per segment"))
    }

    @Test func anUnknownOptionIsNamedAndTheKnownOnesListed() throws {
        let error = try Self.badRequest(["resize:10x10", "frobnicate:3"])
        #expect(error.message.hasPrefix("unknown option \"frobnicate:3\" (Magpie's: downsample, resize, crop, gcrop, round"))
        #expect(error.message.contains("format, quality, metadata, preset, frames; imgproxy's: "))
        #expect(error.message.contains(" color,"))
        #expect(error.message.contains(" resizing_type,"))
        #expect(error.message.hasSuffix(", and their short names)"))
    }

    @Test(arguments: [
        ("resize:abc", "resize:WxH"), ("resize:10x10:squash", "unknown mode"), ("crop:", "takes a width"), ("blur:-1", "negative"),
        ("round:12:corners=xx", "corners"), ("rotate:45", "multiple of 90"), ("blur:1:2", "unexpected argument"),
    ])
    func aMalformedProcessorIsNamedWithTheParsersReason(segment: String, reason: String) throws {
        let error = try Self.badRequest(["quality:80", segment])
        #expect(error.message.contains("\"\(segment)\""))
        #expect(error.message.contains(reason))
    }

    @Test func anEmptySegmentIsRefused() throws {
        _ = try Self.badRequest([""])
        _ = try Self.badRequest([":"])
    }

    // MARK: Presets

    @Test func aPresetIsExpandedInPlace() throws {
        let options = try Self.parse(["crop:50x50", "preset:thumb", "round:4"])
        #expect(options.processor.identifier == (try Self.identifier("crop:50x50|resize:100x100:fill|round:4")))
        #expect(options.quality == 70)
    }

    @Test func laterSegmentsOverrideWhatAPresetSets() throws {
        #expect(try Self.parse(["preset:thumb", "quality:90"]).quality == 90)
        #expect(try Self.parse(["quality:90", "preset:thumb"]).quality == 70)
    }

    @Test func oneSegmentMayNameSeveralPresets() throws {
        let options = try Self.parse(["preset:thumb:sharp"])
        #expect(options == ServeOptions(
            processor: try ImageProcessorSpec.parse("resize:100x100:fill"), format: .fixed(.png), quality: 70, metadata: .strip))
    }

    @Test func anUnknownPresetIsNamed() throws {
        let error = try Self.badRequest(["preset:huge"])
        #expect(error.message.contains("unknown preset \"huge\""))
        _ = try Self.badRequest(["preset:"])
        _ = try Self.badRequest(["preset:thumb::sharp"])
    }

    @Test func aPresetNamingAPresetIsRefusedSoLoopsCannotHappen() throws {
        let nested = try Self.badRequest(["preset:nested"])
        #expect(nested.message.contains("\"nested\""))
        #expect(nested.message.contains("preset:thumb"))
        let loop = try Self.badRequest(["preset:loop"])
        #expect(loop.message.contains("\"loop\""))
    }

    @Test func aBadSegmentInAPresetNamesThePreset() throws {
        let error = try Self.badRequest(["preset:broken"])
        #expect(error.message.contains("\"resize:big\""))
        #expect(error.message.hasSuffix("(from preset \"broken\")"))
    }

    @Test func validatingPresetsFindsTheFirstBadOneAndAcceptsGoodOnes() throws {
        try ServeOptions.validate(presets: ["thumb": Self.presets["thumb"]!, "sharp": Self.presets["sharp"]!])
        let broken = try #require(throws: ServeRequestError.self) { try ServeOptions.validate(presets: Self.presets) }
        #expect(broken.message.contains("\"broken\""))
        #expect(throws: ServeRequestError.self) { try ServeOptions.validate(presets: ["a:b": ["blur:1"]]) }
    }

    // MARK: Extension

    @Test func theExtensionSetsTheFormat() throws {
        #expect(try Self.parse([], ext: "png").format == .fixed(.png))
        #expect(try Self.parse([], ext: "JPG").format == .fixed(.jpeg))
    }

    @Test func anExtensionAndAFormatOptionThatAgreeAreAccepted() throws {
        #expect(try Self.parse(["format:jpeg"], ext: "jpg").format == .fixed(.jpeg))
        #expect(try Self.parse(["format:gif", "format:png"], ext: "png").format == .fixed(.png))
    }

    @Test(arguments: [("format:jpeg", "png"), ("format:auto", "png"), ("preset:sharp", "webp")])
    func anExtensionAndAFormatOptionThatDisagreeAreRefused(segment: String, ext: String) throws {
        let error = try Self.badRequest([segment], ext: ext)
        #expect(error.message.contains("disagree"))
    }

    @Test func anUnknownOrUnwritableExtensionIsRefused() throws {
        #expect(try Self.badRequest([], ext: "xyz").message.contains("\"xyz\""))
        #expect(try Self.badRequest([], ext: "bmp").message.contains("cannot write"))
    }

    // MARK: Normalisation

    @Test(arguments: [
        ([String](), nil as String?, ["quality:0", "metadata:none", "color:keep", "frames:all", "format:auto"], nil as String?),
        (["format:jpeg"], nil, ["quality:80"], "jpg"),
        (["format:webp"], nil, ["quality:79", "format:webp"], nil),
        (["format:png", "quality:70"], nil, ["quality:70", "format:png"], nil),
        (["format:jpg"], nil, [], "jpeg"),
        (["preset:thumb"], nil, ["quality:70", "resize:100x100:fill"], nil),
        (["resize:100x100"], nil, ["resize:100x100:none"], nil),
        (["gray:"], nil, ["bw:"], nil),
        (["round:50%"], nil, ["ROUND:50%w"], nil),
        (["format:png", "format:webp"], nil, ["format:webp"], nil),
    ])
    func equivalentRequestsHaveTheSameNormalizedText(a: [String], extA: String?, b: [String], extB: String?) throws {
        #expect(try Self.parse(a, ext: extA).normalized == Self.parse(b, ext: extB).normalized)
    }

    @Test(arguments: [
        (["blur:2", "resize:100x100"], ["resize:100x100", "blur:2"]),
        (["quality:80"], ["quality:85", "blur:0.5"]),
        (["quality:80"], []),
        (["quality:85"], []),
        (["format:jpeg", "quality:85"], ["format:jpeg"]),
        (["metadata:keep"], []),
        (["color:srgb"], []),
        (["frames:first"], []),
        (["format:png"], []),
        (["format:png"], ["format:gif"]),
        (["resize:100x100:fit"], ["resize:100x100:fill"]),
        (["blur:2"], ["blur:2", "blur:2"]),
    ])
    func requestsWithDifferentOutputHaveDifferentNormalizedText(a: [String], b: [String]) throws {
        #expect(try Self.parse(a).normalized != Self.parse(b).normalized)
    }

    @Test func theNormalizedTextSpellsOutputOptionsThenProcessors() throws {
        let options = try Self.parse(["round:12", "preset:thumb", "format:webp", "frames:first", "color:srgb", "metadata:keep"])
        let processors = try Self.identifier("round:12|resize:100x100:fill")
        #expect(options.normalized == "format:webp/quality:70/metadata:keep/color:srgb/frames:first/\(processors)")
    }

    @Test func equalityComparesProcessorsByIdentifier() throws {
        #expect(try Self.parse(["bw:"]) == Self.parse(["gray:"]))
        #expect(try Self.parse(["blur:1"]) != Self.parse(["blur:2"]))
        #expect(try Self.parse(["quality:85"]) != Self.parse([]))  // equal output, but not the same fields
    }

    // MARK: Encoding options

    @Test func encodingOptionsCarryQualityMetadataAndFrames() throws {
        let still = OutputFormatChoice(format: .jpeg, firstFrameOnly: false, variesOnAccept: false)
        let defaults = try Self.parse([]).encodingOptions(for: still)
        #expect(defaults.quality == 80)
        #expect(defaults.metadata == .none)
        #expect(!defaults.onlyFirstFrame)
        let custom = try Self.parse(["quality:60", "metadata:keep", "frames:first"]).encodingOptions(for: still)
        #expect(custom.quality == 60)
        #expect(custom.metadata == .keep)
        #expect(custom.onlyFirstFrame)
        let firstFrame = OutputFormatChoice(format: .jpeg, firstFrameOnly: true, variesOnAccept: false)
        #expect(try Self.parse([]).encodingOptions(for: firstFrame).onlyFirstFrame)
    }
}
