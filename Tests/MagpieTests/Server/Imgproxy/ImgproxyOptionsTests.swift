import MagpieServer
import Testing

@testable import MagpieCore

/// imgproxy's processing options as URL segments: every spelling, imgproxy's override and empty-argument rules, errors
/// that name the option, the canonical text behind the cache key, and which grammar reads a name both use.
struct ImgproxyOptionsTests {
    static func parse(_ segments: [String], presets: [String: [String]] = [:]) throws -> ServeOptions {
        try ServeOptions.parse(segments, fileExtension: nil, presets: presets)
    }

    static func imgproxy(_ segments: [String]) throws -> ImgproxyOptions { try parse(segments).imgproxy }

    static func refused(_ segments: [String]) throws -> ServeRequestError {
        let error = try #require(throws: ServeRequestError.self) { try parse(segments) }
        #expect(error.status == 400)
        return error
    }

    // MARK: Spellings and rules

    @Test(arguments: [
        ["rs:fill:300:200"], ["resize:fill:300:200"], ["rt:fill", "w:300", "h:200"], ["s:300:200", "rt:fill"],
        ["resizing_type:fill", "width:300", "height:200"], ["size:300:200", "resizing_type:fill"], ["w:300", "rs:fill::200"],
        ["rs:fit:100:100", "rs:fill:300:200"], ["rs:fill:300:200:0:0"], ["rs:fill:300:200:false:False"],
    ])
    func everySpellingOfFill300x200IsTheSameState(segments: [String]) throws {
        let options = try Self.imgproxy(segments)
        #expect(options.resizingType == .fill && options.width == 300 && options.height == 200 && !options.enlarge)
        #expect(try Self.parse(segments).normalized == Self.parse(["rs:fill:300:200"]).normalized)
    }

    @Test func emptyArgumentsKeepWhatWasSetAndLaterOptionsOverride() throws {
        let options = try Self.imgproxy(["rs:fill:300:200:1", "rs::400", "el:0"])
        #expect(options.resizingType == .fill && options.width == 400 && options.height == 200 && !options.enlarge)
        let gravity = try Self.imgproxy(["g:ce:10:20", "g:no"]).gravity
        #expect(gravity == Gravity(.anchor(.north), offsetX: 10, offsetY: 20))
        #expect(try Self.imgproxy(["g:ce:10:20", "g:sm"]).gravity == Gravity(.smart))
        #expect(try Self.imgproxy(["pd:10"]).padding == EdgeInsets(top: 10, right: 10, bottom: 10, left: 10))
        #expect(try Self.imgproxy(["pd:10:20"]).padding == EdgeInsets(top: 10, right: 20, bottom: 10, left: 20))
        #expect(try Self.imgproxy(["pd:1:2:3:4"]).padding == EdgeInsets(top: 1, right: 2, bottom: 3, left: 4))
        #expect(try Self.imgproxy(["t:10:fff", "t:"]).trim == nil)
        #expect(try Self.imgproxy(["bg:fff", "bg:"]).background == nil)
        #expect(try Self.imgproxy(["bg:255:0:0"]).background == RGBAColor(red: 255, green: 0, blue: 0))
        #expect(try Self.imgproxy(["bg:0f0"]).background == RGBAColor(red: 0, green: 255, blue: 0))
        #expect(try Self.imgproxy(["bga:0.25", "background_alpha:0.5"]).backgroundAlpha == 0.5)
        #expect(try Self.imgproxy(["z:2"]).zoomY == 2)
        #expect(try Self.imgproxy(["z:2:3"]).zoomY == 3)
        #expect(try Self.imgproxy(["rot:-90"]).rotation == 270)
        #expect(try Self.imgproxy(["fl:1", "fl::1"]).flipHorizontal)
        let crop = try Self.imgproxy(["c:0.5:100:sowe:5:6"]).crop
        #expect(crop.width == 0.5 && crop.height == 100 && crop.gravity == Gravity(.anchor(.southWest), offsetX: 5, offsetY: 6))
        let extend = try Self.imgproxy(["s:10:20:1:1:noea:4"]).extend
        #expect(extend.enabled && extend.gravity == Gravity(.anchor(.northEast), offsetX: 4))
        let mark = try Self.imgproxy(["wm:0.5:re:10:20:0.3"]).watermark
        #expect(mark == ImgproxyOptions.Watermark(opacity: 0.5, position: nil, offsetX: 10, offsetY: 20, scale: 0.3))
    }

    @Test(arguments: ["1", "t", "T", "true", "TRUE", "True"])
    func booleansInEverySpellingImgproxysParserTakes(text: String) throws {
        #expect(try Self.imgproxy(["el:\(text)"]).enlarge)
        #expect(try !Self.imgproxy(["el:1", "el:\(text == "1" ? "0" : text.replacingOccurrences(of: "t", with: "f").replacingOccurrences(of: "T", with: "F").replacingOccurrences(of: "rue", with: "alse").replacingOccurrences(of: "RUE", with: "ALSE"))"]).enlarge)
    }

    @Test(arguments: [
        ("w:-1", "w:-1"), ("w:abc", "\"abc\""), ("rt:squash", "fit, fill, fill-down, force or auto"), ("g:xx", "gravity"),
        ("g:fp:2:0", "0...1"), ("g:sm:1", "no offsets"), ("ex:1:sm", "not allowed"), ("rot:45", "multiple of 90"),
        ("wm:2", "opacity"), ("wm:0.5:zz", "position"), ("pd:a", "\"a\""), ("el:maybe", "boolean"), ("bg:12345", "hex"),
        ("bg:1:2", "R:G:B"), ("bga:1.5", "0...1"), ("bga:-1", "≥ 0"), ("dpr:0", "> 0"), ("z:0", "> 0"), ("br:300", "-255...255"), ("w:1:2", "one value"),
        ("rs:fill:1:2:3:4:5:6:7:8", "at most 8"), ("c:", "takes a width"), ("t:10:red", "hex"), ("fq:webp", "pairs"),
        ("mb:-5", "mb:-5"), ("exp:soon", "Unix time"), ("pgs:0", "at least 1"), ("skp:xyz", "no image format"),
        ("raw:1", "not supported"), ("fn:a%0D%0ASet-Cookie", "control characters"), ("fn:YQ0KYg:1", "control characters"),
    ])
    func badArgumentsAre400sNamingTheOptionAndTheProblem(segment: String, problem: String) throws {
        let error = try Self.refused([segment])
        #expect(error.message.contains(problem), "\(segment): \(error.message)")
        #expect(error.message.contains(segment.split(separator: ":")[0]), "\(segment): \(error.message)")
    }

    // MARK: The cache key

    @Test(arguments: [
        (["rs:fit:300:200"], ["w:300", "h:200"]),
        (["g:ce"], []),
        (["g:ce:0:0", "el:0", "dpr:1", "z:1"], []),
        (["pd:0"], []),
        (["q:80", "f:jpg"], ["format:jpeg"]),
        (["f:webp", "fq:webp:79"], ["ext:webp"]),
        (["rs:fill:300:200", "g:sm", "q:80"], ["g:sm", "q:80", "rs:fill:300:200"]),
        (["sm:1", "scp:0"], []),
        (["da:0"], ["frames:all"]),
        (["bl:2"], ["blur:2", "w:0"]),
        (["bg:fff", "bga:1"], ["bg:fff"]),
        (["bga:0.5"], []),
        (["kcr:1"], []),
        (["kcr:0", "sm:0"], ["sm:0"]),
    ])
    func urlsThatMeanTheSameResultShareAKey(a: [String], b: [String]) throws {
        #expect(try Self.parse(a).normalized == Self.parse(b).normalized)
    }

    @Test(arguments: [
        (["rs:fill:300:200"], ["rs:fit:300:200"]),
        (["rs:fill:300:200"], ["rs:fill:300:201"]),
        (["g:no"], ["g:so"]),
        (["g:no:1"], ["g:no:2"]),
        (["dpr:2"], []),
        (["el:1"], []),
        (["c:100"], ["c:101"]),
        (["bl:2"], ["sh:2"]),
        (["cb:1"], ["cb:2"]),
        (["mb:1000"], []),
        (["scp:1"], []),
        (["pg:1"], []),
        (["ar:0"], []),
        (["bg:fff", "bga:0.5"], ["bg:fff"]),
        (["bg:fff", "bga:0.5"], ["bg:fff", "bga:0.25"]),
        (["kcr:0"], []),
        (["blur:2", "resize:100x100"], ["blur:2", "w:100"]),
    ])
    func urlsThatMeanDifferentResultsNeverShareAKey(a: [String], b: [String]) throws {
        #expect(try Self.parse(a).normalized != Self.parse(b).normalized)
    }

    // MARK: Which grammar

    @Test func namesBothGrammarsUseAreDecidedByTheArgumentsOrTheRestOfTheURL() throws {
        let magpieResize = try Self.parse(["resize:300x200:fill"])
        #expect(magpieResize.processor.identifier == "resize:300x200:fill" && magpieResize.imgproxy.isDefault)
        #expect(try Self.parse(["resize:fill:300:200"]).imgproxy.width == 300)
        #expect(try Self.parse(["crop:100x50"]).processor.identifier.hasPrefix("crop:100x50"))
        #expect(try Self.parse(["crop:100:50"]).imgproxy.crop.width == 100)
        #expect(try Self.parse(["flip:h"]).processor.identifier == "flip:h")
        #expect(try Self.parse(["flip:1:0"]).imgproxy.flipHorizontal)
        // rotate and blur read alike: Magpie's in URL order alone, imgproxy's (its pipeline's place) beside its options.
        let magpie = try Self.parse(["blur:2", "rotate:90"])
        #expect(magpie.processor.identifier == "blur:2|rotate:90" && magpie.imgproxy.isDefault)
        let imgproxy = try Self.parse(["blur:2", "rotate:90", "w:100"])
        #expect(imgproxy.processor.identifier == "" && imgproxy.imgproxy.blur == 2 && imgproxy.imgproxy.rotation == 90)
        // Magpie's own processors in an imgproxy URL run after imgproxy's pipeline.
        let mixed = try Self.parse(["round:8", "rs:fill:100:100"])
        #expect(mixed.processor.identifier == "round:8" && mixed.imgproxy.width == 100)
        #expect(mixed.pipeline().identifier.hasPrefix("imgproxy;rt:fill;w:100;h:100|round:8"))
    }

    @Test func aNameThatFitsNeitherGrammarSaysBoth() throws {
        let error = try Self.refused(["resize:300"])
        #expect(error.message.contains("Magpie's resize:WxH"))
        #expect(error.message.contains("imgproxy's resize:TYPE:WIDTH:HEIGHT"))
    }

    @Test func theDefaultPresetAppliesFirstAndTheURLOverridesIt() throws {
        let presets = ["default": ["q:70", "rs:fit:500:500"], "thumb": ["rs:fill:100:100"]]
        let plain = try Self.parse([], presets: presets)
        #expect(plain.quality == 70 && plain.imgproxy.width == 500)
        let overridden = try Self.parse(["pr:thumb", "q:90"], presets: presets)
        #expect(overridden.quality == 90 && overridden.imgproxy.width == 100 && overridden.imgproxy.resizingType == .fill)
    }

    // MARK: Output and response options

    @Test func outputOptionsHaveImgproxysMeaning() throws {
        let options = try Self.parse([
            "fq:webp:70:avif:50", "mb:20000", "sm:0", "scp:1", "pg:2", "pgs:3", "ar:0", "skp:png:gif", "cb:v2",
            "exp:4102444800", "fn:holiday", "att:1", "kcr:0",
        ])
        #expect(options.formatQuality == [.webp: 70, .avif: 50])
        #expect(options.quality(for: .webp) == 70 && options.quality(for: .jpeg) == 80)
        #expect(options.maxBytes == 20_000)
        #expect(options.metadata == .keep && options.color == .srgb)
        #expect(options.page == 2 && options.pages == 3 && !options.autoRotate)
        #expect(options.skipProcessing == [.png, .gif] && options.cachebuster == "v2")
        #expect(options.expires == 4_102_444_800 && options.filename == "holiday" && options.attachment && !options.keepCopyright)
        #expect(try Self.parse(["fn:aG9saWRheQ:1"]).filename == "holiday")
        #expect(try Self.parse(["da:1"]).firstFrameOnly)
        #expect(try Self.parse(["ext:png"]).format == .fixed(.png))
        #expect(try Self.parse(["f:webp"]).format == .fixed(.webp))
    }
}
