import Foundation
import MagpieServer
import Testing

@testable import MagpieCore

/// thumbor's URL grammar and signatures: each part read as thumbor reads it, libthumbor's signatures accepted, errors
/// that name the part, and one cache key per meaning.
struct ThumborOptionsTests {
    static let noKeys = ImageURLSigner(keys: [])

    static func parse(_ path: String, key: String? = nil, unsigned: Bool = true) throws -> ServeRequest {
        try ServeRequest.parse(
            path: path, signer: noKeys, allowsUnsigned: unsigned, presets: [:], thumborSigner: ThumborSigner(securityKey: key))
    }

    static func thumbor(_ path: String) throws -> ThumborOptions {
        try #require(try parse(path).options.thumbor)
    }

    static func refused(_ path: String, key: String? = nil, unsigned: Bool = true) throws -> ServeRequestError {
        try #require(throws: ServeRequestError.self) { try parse(path, key: key, unsigned: unsigned) }
    }

    // Signed by libthumbor 2 (`CryptoURL(key="MY_SECURE_KEY").generate(...)`).
    static let libthumborURLs = [
        "/OyKNhyDkOpgi9SZqSdyBdwfAStU=/300x200/smart/example.com/img/a.jpg",
        "/n_gjBjyYeOrFufF1mNM0XL8Yo84=/fit-in/300x200/filters:quality(80):format(webp)/https%3A%2F%2Fexample.com%2Fa.jpg",
    ]

    @Test(arguments: libthumborURLs)
    func libthumborsSignaturesVerifyWithTheSecurityKeyAndNoOther(path: String) throws {
        #expect(try Self.parse(path, key: "MY_SECURE_KEY", unsigned: false).options.thumbor != nil)
        #expect(try Self.refused(path, key: "OTHER_KEY", unsigned: false).status == 403)
        #expect(try Self.refused(path, key: nil, unsigned: true).status == 403, "no key: no signature is valid")
        let tampered = path.replacingOccurrences(of: "300x200", with: "301x200")
        #expect(try Self.refused(tampered, key: "MY_SECURE_KEY").status == 403)
    }

    @Test func theSignerWritesLibthumborsSignature() {
        let signer = ThumborSigner(securityKey: "MY_SECURE_KEY")
        #expect(signer.signature(forPath: "300x200/smart/example.com/img/a.jpg") == "OyKNhyDkOpgi9SZqSdyBdwfAStU=")
        #expect(ThumborSigner(securityKey: "").isEmpty && ThumborSigner(securityKey: nil).signature(forPath: "x") == nil)
    }

    @Test func unsafeIsAcceptedOnlyWhereUnsignedURLsAre() throws {
        #expect(try Self.refused("/unsafe/300x200/example.com/a.jpg", unsigned: false).status == 403)
        let request = try Self.parse("/unsafe/300x200/example.com/a.jpg")
        #expect(request.source == .remote(URL(string: "http://example.com/a.jpg")!), "no scheme: http, as thumbor's loader")
        let merged = try Self.parse("/unsafe/300x200/https:/example.com/a.jpg")
        #expect(merged.source == .remote(URL(string: "https://example.com/a.jpg")!), "a slash merged by a proxy is put back")
    }

    @Test func everyPartIsReadInThumborsOrder() throws {
        let options = try Self.thumbor(
            "/unsafe/trim:bottom-right:12/10x20:210x170/adaptive-full-fit-in/-300x-orig/right/bottom/smart/filters:quality(70):grayscale()/https%3A%2F%2Fexample.com%2Fa.jpg")
        #expect(options.trimReference == .bottomRight && options.trimTolerance == 12)
        #expect(options.crop == ThumborOptions.Box(left: 10, top: 20, right: 210, bottom: 170))
        #expect(options.fitMode == .adaptiveFullFitIn)
        #expect(options.flipHorizontal && options.width == .pixels(300) && options.flipVertical && options.height == .original)
        #expect(options.horizontalAlignment == 1 && options.verticalAlignment == 1 && options.smart)
        #expect(options.filters == [.quality(70), .grayscale])
        #expect(try Self.parse("/unsafe/filters:quality(70)/a.example/x.jpg").options.quality == 70)
    }

    @Test func aPartOutOfOrderStartsTheImageAsInThumbor() throws {
        // thumbor's pattern takes each part at most once, in order: after "smart", a size is the image's first segment.
        let request = try Self.parse("/unsafe/smart/300x200/example.com/a.jpg")
        #expect(request.source == .remote(URL(string: "http://300x200/example.com/a.jpg")!))
        var expected = ThumborOptions()
        expected.smart = true
        #expect(request.options.thumbor == expected)
    }

    @Test func filtersEndAtTheFirstParenthesisSlashSoArgumentsMayHoldColons() throws {
        let options = try Self.thumbor("/unsafe/filters:fill(ff0000,true):round_corner(20|10,255,255,255):blur(3,1.5)/example.com/a.jpg")
        #expect(options.filters == [
            .fill(RGBAColor(red: 255, green: 0, blue: 0), fillTransparent: true),
            .roundCorner(horizontal: 20, vertical: 10, color: RGBAColor(red: 255, green: 255, blue: 255), transparent: false),
            .blur(radius: 3, sigma: 1.5),
        ])
        #expect(try Self.thumbor("/unsafe/filters:fill(DarkOrange)/e.com/a.jpg").filters == [.fill(RGBAColor(red: 255, green: 140, blue: 0), fillTransparent: false)])
        #expect(try Self.thumbor("/unsafe/filters:background_color(0f08)/e.com/a.jpg").filters
            == [.backgroundColor(RGBAColor(red: 0, green: 255, blue: 0, alpha: 136))])
    }

    @Test func unknownFiltersAreIgnoredAsThumborDoes() throws {
        let options = try Self.thumbor("/unsafe/filters:frobnicate(1):quality(60):rotate(45)/e.com/a.jpg")
        #expect(options.filters == [.quality(60)], "an unknown name and a rotation thumbor skips leave no trace")
        #expect(try Self.parse("/unsafe/filters:frobnicate(1)/e.com/a.jpg").options.normalized
            == Self.parse("/unsafe/e.com/a.jpg").options.normalized)
    }

    @Test(arguments: [
        ("/unsafe/filters:quality(eighty)/e.com/a.jpg", "quality"), ("/unsafe/filters:blur(0)/e.com/a.jpg", "blur"),
        ("/unsafe/filters:blur(200)/e.com/a.jpg", "1...150"), ("/unsafe/filters:fill(notacolour)/e.com/a.jpg", "colour"),
        ("/unsafe/filters:round_corner(a,1,2,3)/e.com/a.jpg", "RADIUS"), ("/unsafe/filters:colorize(10,20,30,ff0000)/e.com/a.jpg", "not supported"),
        ("/unsafe/filters:sharpen(1,2)/e.com/a.jpg", "takes 3 arguments"), ("/unsafe/debug/300x200/e.com/a.jpg", "debug"),
        ("/unsafe/", "no image"), ("/unsafe/300x200/ftp%3A%2F%2Fe.com%2Fa.jpg", "http"),
    ])
    func malformedPartsAre400sThatNameThem(path: String, fragment: String) throws {
        let error = try Self.refused(path)
        #expect(error.status == 400)
        #expect(error.message.contains(fragment), "\(error.message)")
    }

    @Test(arguments: [
        ("/unsafe/300x200/e.com/a.jpg", "/unsafe/300x200/center/middle/e.com/a.jpg"),
        ("/unsafe/300x200/e.com/a.jpg", "/unsafe/300x200/filters:no_such_filter(1)/e.com/a.jpg"),
        ("/unsafe/filters:blur(2)/e.com/a.jpg", "/unsafe/filters:blur(2,2)/e.com/a.jpg"),
        ("/unsafe/filters:quality(80):format(jpg)/e.com/a.jpg", "/unsafe/filters:format(jpeg):quality(80)/e.com/a.jpg"),
    ])
    func urlsThatMeanTheSameResultShareAKey(a: String, b: String) throws {
        #expect(try Self.parse(a).options.normalized == Self.parse(b).options.normalized)
    }

    @Test(arguments: [
        ("/unsafe/300x200/e.com/a.jpg", "/unsafe/fit-in/300x200/e.com/a.jpg"),
        ("/unsafe/300x200/e.com/a.jpg", "/unsafe/300x200/smart/e.com/a.jpg"),
        ("/unsafe/300x200/e.com/a.jpg", "/unsafe/-300x200/e.com/a.jpg"),
        ("/unsafe/300x200/e.com/a.jpg", "/unsafe/300x200/left/e.com/a.jpg"),
        ("/unsafe/filters:quality(80)/e.com/a.jpg", "/unsafe/filters:quality(81)/e.com/a.jpg"),
        ("/unsafe/filters:blur(2):grayscale()/e.com/a.jpg", "/unsafe/filters:grayscale():blur(2)/e.com/a.jpg"),
        ("/unsafe/e.com/a.jpg", "/unsafe/filters:strip_icc()/e.com/a.jpg"),
        ("/unsafe/e.com/a.jpg", "/insecure/plain/http%3A%2F%2Fe.com%2Fa.jpg"),
    ])
    func urlsThatMeanDifferentResultsNeverShareAKey(a: String, b: String) throws {
        #expect(try Self.parse(a).options.normalized != Self.parse(b).options.normalized)
    }

    // MARK: the filters added in part 2's second step

    static let point = ToneCurveProcessor.Point.init(x:y:)

    @Test(arguments: [
        ("contrast(30)", ThumborFilter.contrast(30)), ("contrast(-100)", .contrast(-100)),
        ("rgb(10,-20,100)", .rgb(red: 10, green: -20, blue: 100)), ("saturation(1.5)", .saturation(1.5)),
        ("saturation(-.5)", .saturation(-0.5)), ("noise(30)", .noise(amount: 30, seed: 0)), ("noise(30,7)", .noise(amount: 30, seed: 7)),
        ("equalize()", .equalize),
        ("curve([(0,0),(128,200),(255,255)],[],[(0,10),(255,245)],[])",
         .curve(all: [point(0, 0), point(128, 200), point(255, 255)], red: [], green: [point(0, 10), point(255, 245)], blue: [])),
        ("convolution(1;2;1;2;4;2;1;2;1,3,false)", .convolution(kernel: [1, 2, 1, 2, 4, 2, 1, 2, 1], columns: 3, normalize: false)),
        ("convolution(-1;0;1,3)", .convolution(kernel: [-1, 0, 1], columns: 3, normalize: true)),
        ("focal(10x20:110x220)", .focal(ThumborOptions.Box(left: 10, top: 20, right: 110, bottom: 220))),
        ("autojpg()", .autoJPG(true)), ("autojpg(false)", .autoJPG(false)), ("max_age(60)", .maxAge(60)),
        ("fill(blur)", .fillBlur(fillTransparent: false)), ("fill(auto,true)", .fillAuto(fillTransparent: true)),
    ])
    func eachNewFilterReadsItsArguments(call: String, expected: ThumborFilter) throws {
        #expect(try Self.thumbor("/unsafe/filters:\(call)/e.com/a.jpg").filters == [expected], "\(call)")
    }

    @Test func watermarkReadsThumborsPositionsAlphaAndRatios() throws {
        let options = try Self.thumbor("/unsafe/filters:watermark(wm.example/mark.png,-10,20p,40,30,none):quality(80)/e.com/a.jpg")
        let mark = try #require(options.filters.first.flatMap { if case .watermark(let mark) = $0 { mark } else { nil } })
        #expect(mark.url == "wm.example/mark.png" && mark.x == .pixels(10, fromFarEdge: true) && mark.y == .percent(20, fromFarEdge: false))
        #expect(mark.alpha == 40 && mark.widthRatio == 0.3 && mark.heightRatio == nil)
        #expect(options.watermarkURLs == ["wm.example/mark.png"])
        let quoted = try Self.thumbor("/unsafe/filters:watermark('https://wm.example/a,b.png',center,repeat,0)/e.com/a.jpg")
        #expect(quoted.watermarkURLs == ["https://wm.example/a,b.png"], "a quoted URL may hold commas; the quotes go")
    }

    @Test func extractFocalLoadsTheInnerImageWholeWithItsCropAsTheFocalRegion() throws {
        let request = try Self.parse("/unsafe/300x200/filters:extract_focal()/thumbor.example/unsafe/100x150:300x400/origin.example/a.jpg")
        #expect(request.source == .remote(URL(string: "http://origin.example/a.jpg")!))
        #expect(request.options.thumbor?.filters == [.focal(ThumborOptions.Box(left: 100, top: 150, right: 300, bottom: 400))])
        let plain = try Self.parse("/unsafe/300x200/filters:extract_focal()/origin.example/a.jpg")
        #expect(plain.source == .remote(URL(string: "http://origin.example/a.jpg")!) && plain.options.thumbor?.filters == [],
                "no inner thumbor URL with a crop: nothing to extract, as in thumbor")
    }

    @Test func metaIsReadAndNeverSharesTheImagesKey() throws {
        let meta = try Self.parse("/unsafe/meta/300x200/smart/e.com/a.jpg")
        #expect(meta.options.thumbor?.meta == true && meta.options.thumbor?.smart == true)
        #expect(meta.options.normalized != (try Self.parse("/unsafe/300x200/smart/e.com/a.jpg")).options.normalized)
    }

    @Test(arguments: [
        ("contrast(x)", "contrast"), ("contrast(101)", "contrast"), ("rgb(1,2)", "rgb"), ("rgb(1,2,300)", "rgb"),
        ("saturation(much)", "saturation"), ("noise(101)", "noise"), ("noise(-1)", "noise"), ("equalize(1)", "equalize"),
        ("curve([(0,0)],[],[])", "curve"), ("curve([(0,0),(300,1)],[],[],[])", "curve"), ("curve([(9,0),(3,1)],[],[],[])", "curve"),
        ("convolution(1;2;1;2,2)", "convolution"), ("convolution(1;x;1,3)", "convolution"), ("convolution(1;1;1,0)", "convolution"),
        ("watermark(a.png,10,10)", "watermark"), ("watermark(a.png,left,10,50)", "watermark"), ("watermark(a.png,1,1,101)", "watermark"),
        ("watermark(a.png,1,1,10,200,none)", "watermark"), ("focal(10x10)", "focal"), ("focal(ax1:2x3)", "focal"),
        ("autojpg(maybe)", "autojpg"), ("max_age(-5)", "max_age"), ("max_age()", "max_age"), ("fill(blur,perhaps)", "fill"),
    ])
    func badArgumentsOfTheNewFiltersAre400sNamingTheFilter(call: String, name: String) throws {
        let error = try Self.refused("/unsafe/filters:\(call)/e.com/a.jpg")
        #expect(error.status == 400)
        #expect(error.message.contains("(\(name))"), "\(error.message)")
    }

    @Test(arguments: [
        ("contrast(10)", "contrast(20)"), ("rgb(10,0,0)", "rgb(0,10,0)"), ("saturation(0.5)", "saturation(1.5)"),
        ("noise(10)", "noise(20)"), ("noise(10,1)", "noise(10,2)"), ("equalize()", "grayscale()"),
        ("curve([(0,0),(255,255)],[],[],[])", "curve([(0,0),(255,200)],[],[],[])"),
        ("curve([],[(0,0),(255,255)],[],[])", "curve([],[],[(0,0),(255,255)],[])"),
        ("convolution(1;2;1,3,true)", "convolution(1;2;1,3,false)"), ("convolution(1;2;1,3)", "convolution(1;2;1,1)"),
        ("watermark(a.png,1,1,0)", "watermark(b.png,1,1,0)"), ("watermark(a.png,1,1,0)", "watermark(a.png,-1,1,0)"),
        ("watermark(a.png,1,1,0)", "watermark(a.png,1,1,10)"), ("watermark(a.png,1,1,0,20)", "watermark(a.png,1,1,0,30)"),
        ("focal(0x0:10x10)", "focal(0x0:20x10)"), ("autojpg()", "autojpg(false)"), ("fill(blur)", "fill(auto)"),
        ("fill(blur)", "fill(blur,true)"), ("fill(auto)", "fill(black)"),
    ])
    func eachNewFiltersArgumentsChangeTheKey(a: String, b: String) throws {
        let first = try Self.parse("/unsafe/300x200/filters:\(a)/e.com/a.jpg").options.normalized
        #expect(first != (try Self.parse("/unsafe/300x200/filters:\(b)/e.com/a.jpg")).options.normalized, "\(a) vs \(b)")
        #expect(first != (try Self.parse("/unsafe/300x200/e.com/a.jpg")).options.normalized, "\(a) vs none")
    }

    @Test func maxAgeSetsTheAnswersLifetimeButNotTheImagesKey() throws {
        let aged = try Self.parse("/unsafe/300x200/filters:max_age(60)/e.com/a.jpg")
        #expect(aged.options.thumbor?.maxAge == 60)
        #expect(aged.options.normalized == (try Self.parse("/unsafe/300x200/e.com/a.jpg")).options.normalized, "same bytes, one entry")
    }
}
