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
}
