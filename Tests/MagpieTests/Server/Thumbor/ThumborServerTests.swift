import AsyncHTTPClient
import Foundation
import MagpieOrigin
import MagpieServer
import Testing

@testable import MagpieCore

/// thumbor's URLs against a running server and origin: thumbor's sizes for each geometry (worked out by hand from
/// thumbor 7's transformer), its filters' effects, signatures, and one cache entry per meaning.
@Suite("magpie serve with thumbor's URLs", .serialized)
struct ThumborServerTests {
    static let assets = ImgproxyServerTests.assets

    static func unsafe(_ fixture: ServerFixture, _ parts: String, _ name: String = "large.png") -> String {
        let source = fixture.origin.url("/img/\(name)").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return "/unsafe/" + (parts.isEmpty ? "" : parts + "/") + source
    }

    static func with(_ body: (ServerFixture) async throws -> Void) async throws {
        try await ServerFixture.with(extraAssets: assets, configure: {
            $0.allowsUnsigned = true
            $0.thumborSecurityKey = "MY_SECURE_KEY"
        }, body)
    }

    // The source is 400×300.
    @Test(arguments: [
        ("300x200", 300, 200), ("300x0", 300, 225), ("0x150", 200, 150), ("-300x-200", 300, 200), ("origx100", 400, 100),
        ("1000x600", 1000, 600), ("fit-in/100x100", 100, 75), ("fit-in/1000x1000", 400, 300),
        ("full-fit-in/100x100", 133, 100), ("adaptive-fit-in/100x200", 133, 100), ("10x20:210x170", 200, 150),
        ("10x20:210x170/100x0", 100, 75), ("300x200/filters:proportion(0.5)", 150, 100),
        ("1000x600/filters:no_upscale()", 400, 300), ("fit-in/1000x1000/filters:upscale()", 1000, 750),
        ("300x200/filters:stretch()", 300, 200), ("fit-in/300x300/filters:fill(red)", 300, 300),
        ("300x200/filters:rotate(90)", 200, 300), ("300x200/smart", 300, 200), ("trim/100x0", 100, 75), ("10x20:210x170/origx50", 200, 50),
    ])
    func thumborsSizesForEachGeometry(parts: String, width: Int, height: Int) async throws {
        try await Self.with { fixture in
            let answer = try await fixture.request(Self.unsafe(fixture, parts))
            #expect(answer.status == 200, "\(parts): \(answer.text)")
            #expect(try ImageCoderRegistry.shared.decode(answer.body).pixelSize == PixelSize(width: width, height: height), "\(parts)")
        }
    }

    @Test func flipsAlignmentAndFillPlaceThePixelsWhereThumborDoes() async throws {
        try await Self.with { fixture in
            func image(_ parts: String) async throws -> Image {
                try ImageCoderRegistry.shared.decode(try await fixture.request(Self.unsafe(fixture, parts)).body)
            }
            let plain = try await image("100x300")
            let left = try await image("100x300/left")
            let right = try await image("100x300/right")
            #expect(left.pixels[0, 150] != right.pixels[0, 150], "left and right keep different strips")
            let flipped = try await image("-100x300")
            #expect(flipped.pixels[99, 150] == plain.pixels[0, 150] && flipped.pixels[0, 150] == plain.pixels[99, 150])
            // fit-in 300×300 makes 300×225, centred: (300 − 225) // 2 = 37 rows of red above.
            let filled = try await image("fit-in/300x300/filters:fill(red)")
            #expect(filled.pixels[150, 36] == RGBAColor(red: 255, green: 0, blue: 0))
            #expect(filled.pixels[150, 37] != RGBAColor(red: 255, green: 0, blue: 0))
            let gray = try await image("100x75/filters:grayscale()")
            let pixel = gray.pixels[50, 40]
            #expect(pixel.red == pixel.green && pixel.green == pixel.blue)
        }
    }

    @Test func outputFiltersSetTheFormatAndQuality() async throws {
        try await Self.with { fixture in
            let webp = try await fixture.request(Self.unsafe(fixture, "100x100/filters:format(webp)"))
            #expect(webp.header("Content-Type") == "image/webp")
            let source = try await fixture.request(Self.unsafe(fixture, "100x100", "large.jpg"))
            #expect(source.header("Content-Type") == "image/jpeg", "the source's format without format()")
            let low = try await fixture.request(Self.unsafe(fixture, "100x100/filters:quality(20)", "large.jpg"))
            let high = try await fixture.request(Self.unsafe(fixture, "100x100/filters:quality(95)", "large.jpg"))
            #expect(low.body.count < high.body.count)
            let fill = try await fixture.request(Self.unsafe(fixture, "fit-in/300x300/filters:fill(transparent)", "large.jpg"))
            #expect(fill.header("Content-Type") == "image/jpeg", "a JPEG source stays JPEG, as in thumbor")
        }
    }

    @Test func signedURLsNeedTheKeyAndUnknownFiltersChangeNothing() async throws {
        try await Self.with { fixture in
            let source = fixture.origin.url("/img/large.png").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let path = "fit-in/100x100/" + source
            let signature = try #require(ThumborSigner(securityKey: "MY_SECURE_KEY").signature(forPath: path))
            let signed = try await fixture.request("/\(signature)/\(path)")
            #expect(signed.status == 200)
            let wrong = try #require(ThumborSigner(securityKey: "OTHER").signature(forPath: path))
            #expect(try await fixture.request("/\(wrong)/\(path)").status == 403)
            let plain = try await fixture.request(Self.unsafe(fixture, "fit-in/100x100"))
            let ignored = try await fixture.request(Self.unsafe(fixture, "fit-in/100x100/filters:no_such_filter(3)"))
            #expect(plain.body == ignored.body && ignored.header("X-Magpie-Cache") != "miss")
            #expect(try await fixture.request(Self.unsafe(fixture, "fit-in/100x100/filters:blur(x)")).status == 400)
        }
    }

    @Test func maxAgeSetsCacheControlAndSharesTheImage() async throws {
        try await Self.with { fixture in
            let plain = try await fixture.request(Self.unsafe(fixture, "100x100"))
            let aged = try await fixture.request(Self.unsafe(fixture, "100x100/filters:max_age(60)"))
            #expect(aged.status == 200 && aged.header("Cache-Control") == "public, max-age=60")
            #expect(plain.header("Cache-Control") != "public, max-age=60")
            #expect(aged.body == plain.body && aged.header("X-Magpie-Cache") == "memory", "same bytes, one cache entry")
        }
    }

    @Test func metaAnswersThumborsJSONAndNeverTheImagesEntry() async throws {
        try await Self.with { fixture in
            let meta = try await fixture.request(Self.unsafe(fixture, "meta/300x200"))
            #expect(meta.status == 200 && meta.header("Content-Type") == "application/json", "\(meta.text)")
            let json = try #require(try JSONSerialization.jsonObject(with: meta.body) as? [String: Any])
            let thumbor = try #require(json["thumbor"] as? [String: Any])
            let source = try #require(thumbor["source"] as? [String: Any])
            #expect(source["width"] as? Int == 300 && source["height"] as? Int == 200 && source["frameCount"] as? Int == 1)
            #expect((source["url"] as? String)?.hasSuffix("/img/large.png") == true)
            let operations = try #require(thumbor["operations"] as? [[String: Any]])
            #expect(operations.map { $0["type"] as? String } == ["crop", "resize"])
            #expect(operations.first?["top"] as? Int == 16 && operations.first?["bottom"] as? Int == 283, "thumbor's crop of 400×300")
            let target = try #require(thumbor["target"] as? [String: Any])
            #expect(target["width"] as? Double == 300 && target["height"] as? Double == 200)
            #expect((thumbor["focal_points"] as? [[String: Any]])?.first?["origin"] as? String == "alignment")
            // The image of the same URL without meta/ is an image, and a second meta answer is JSON again.
            let image = try await fixture.request(Self.unsafe(fixture, "300x200"))
            #expect(image.header("Content-Type") == "image/png")
            let again = try await fixture.request(Self.unsafe(fixture, "meta/300x200"))
            #expect(again.header("Content-Type") == "application/json" && again.body == meta.body)
            let fitted = try await fixture.request(Self.unsafe(fixture, "meta/fit-in/-100x100/filters:focal(10x10:50x50)"))
            #expect(fitted.text.contains(#""operations": [{"type": "resize", "width": 100.0, "height": 75}, {"type": "flip_horizontally"}]"#),
                    "\(fitted.text)")
            #expect(fitted.text.contains(#"{"x": 30, "y": 30, "z": 1600, "height": 40, "width": 40, "origin": "Explicit"}"#))
        }
    }

    @Test func watermarkIsFetchedFromItsURLUnderTheSourceRules() async throws {
        try await Self.with { fixture in
            let mark = fixture.origin.url("/img/large.jpg")
            let plain = try ImageCoderRegistry.shared.decode(try await fixture.request(Self.unsafe(fixture, "200x150")).body)
            let answer = try await fixture.request(Self.unsafe(fixture, "200x150/filters:watermark(\(mark),0,0,0,25,none)"))
            #expect(answer.status == 200, "\(answer.text)")
            let marked = try ImageCoderRegistry.shared.decode(answer.body)
            #expect(marked.pixelSize == PixelSize(width: 200, height: 150))
            // The watermark (the 400×300 gradient fitted into 50 px wide) sits in the top-left corner, not elsewhere.
            #expect(marked.pixels[45, 30] != plain.pixels[45, 30] && marked.pixels[150, 100] == plain.pixels[150, 100])
            let missing = try await fixture.request(Self.unsafe(fixture, "200x150/filters:watermark(\(fixture.origin.url("/img/none.png")),0,0,0)"))
            #expect(missing.status >= 400 && missing.text.contains("watermark"), "\(missing.status) \(missing.text)")
        }
        try await ServerFixture.with(extraAssets: Self.assets, configure: {
            $0.allowsUnsigned = true
            $0.allowedSourcePrefixes = ["http://only.example/"]
        }) { fixture in
            let answer = try await fixture.request("/unsafe/filters:watermark(http://elsewhere.example/w.png,0,0,0)/only.example/a.png")
            #expect(answer.status == 403, "\(answer.text)")
        }
    }

    @Test func theNewFiltersAreServedAndAutojpgTurnsAnOpaquePNGIntoJPEG() async throws {
        try await Self.with { fixture in
            for filter in ["contrast(40)", "rgb(10,0,-10)", "saturation(0.5)", "noise(20)", "equalize()", "curve(%5B(0,0),(255,200)%5D,%5B%5D,%5B%5D,%5B%5D)",
                           "convolution(1;2;1,3)", "fill(blur)", "fill(auto)"] {
                let answer = try await fixture.request(Self.unsafe(fixture, "fit-in/150x150/filters:\(filter)"))
                #expect(answer.status == 200, "\(filter): \(answer.text)")
            }
            let noisy = try await fixture.request(Self.unsafe(fixture, "100x100/filters:noise(30,3)"))
            let fresh = try await fixture.request(Self.unsafe(fixture, "100x100/filters:noise(30,3):quality(80)"))
            #expect(noisy.body == fresh.body, "seeded noise: the same pixels")
            let jpeg = try await fixture.request(Self.unsafe(fixture, "100x100/filters:autojpg()"))
            #expect(jpeg.header("Content-Type") == "image/jpeg")
        }
    }
}
