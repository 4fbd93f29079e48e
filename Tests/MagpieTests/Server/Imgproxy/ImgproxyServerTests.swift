import AsyncHTTPClient
import Foundation
import MagpieOrigin
import MagpieServer
import NIOHTTP1
import Testing

@testable import MagpieCore

/// imgproxy's URLs against a running server and origin: the sizes, formats and headers imgproxy's documentation gives
/// for its common options, one cache entry for every spelling of one meaning, and imgproxy's statuses.
@Suite("magpie serve with imgproxy's options", .serialized)
struct ImgproxyServerTests {
    /// A 400×300 PNG and JPEG, a 4-frame GIF.
    static let assets: [String: OriginAsset] = {
        let photo = try! TestImages.gradient(width: 400, height: 300)
        let frames = try! (0..<4).map { index in
            ImageFrame(pixels: try PixelBuffer(width: 40, height: 30, fill: RGBAColor(red: UInt8(index * 60), green: 0, blue: 0)),
                       duration: .milliseconds(100))
        }
        return [
            "large.png": OriginAsset(bytes: [UInt8](try! ImageCoderRegistry.shared.encode(Image(pixels: photo), as: .png)), contentType: "image/png"),
            "large.jpg": OriginAsset(bytes: [UInt8](try! ImageCoderRegistry.shared.encode(Image(pixels: photo), as: .jpeg)), contentType: "image/jpeg"),
            "owned.jpg": OriginAsset(bytes: [UInt8](try! {
                var image = Image(pixels: photo)
                image.metadata = ImageMetadata(exif: ColorManagementTests.exifWithCopyright)
                var keep = ImageEncodingOptions.default
                keep.metadata = .keep
                return try ImageCoderRegistry.shared.encode(image, as: .jpeg, options: keep)
            }()), contentType: "image/jpeg"),
            "anim.gif": OriginAsset(bytes: [UInt8](try! ImageCoderRegistry.shared.encode(try Image(frames: frames), as: .gif)), contentType: "image/gif"),
        ]
    }()

    static func decoded(_ answer: ServerFixture.Answer) throws -> Image {
        try ImageCoderRegistry.shared.decode(answer.body)
    }

    @Test(arguments: [
        ("rs:fill:300:200", 300, 200), ("resize:fill:300:200", 300, 200), ("w:300/h:200", 267, 200), ("s:300:200", 267, 200),
        ("g:sm/rs:fill:300:200", 300, 200), ("q:80", 400, 300), ("resizing_type:fill/width:300/height:200", 300, 200),
        ("rs:fit:100:100/pd:10", 120, 95), ("c:200:100/rs:fit:100:0", 100, 50), ("rot:90", 300, 400),
        ("rs:fill:100:100/ex:1", 100, 100), ("rs:fit:1000:1000", 400, 300), ("rs:fit:1000:1000:1", 1000, 750),
        ("rs:fill-down:1000:500", 400, 200), ("w:100/dpr:2", 200, 150), ("rs:fit:100:100/exar:1:ce", 100, 100),
        ("mw:800", 800, 600), ("t:5/rs:force:50:50", 50, 50), ("rs:fit:200:200/bl:2/sh:1/pix:4/bg:fff", 200, 150),
    ])
    func imgproxysCommonURLsGiveImgproxysSizes(options: String, width: Int, height: Int) async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let answer = try await fixture.request(fixture.imagePath("large.png", options: options.split(separator: "/").map(String.init)))
            #expect(answer.status == 200, "\(options): \(answer.text)")
            #expect(try Self.decoded(answer).pixelSize == PixelSize(width: width, height: height), "\(options)")
        }
    }

    @Test func formatsQualitiesAndTheFileNameFollowTheOptions() async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let webp = try await fixture.request(fixture.imagePath("large.png", options: ["rs:fill:100:100", "f:webp"]))
            #expect(webp.header("Content-Type") == "image/webp")
            #expect(webp.header("Content-Disposition") == #"inline; filename="large.webp""#)
            let named = try await fixture.request(fixture.imagePath("large.jpg", options: ["fn:holiday", "att:1"], extension: "png"))
            #expect(named.header("Content-Disposition") == #"attachment; filename="holiday.png""#)
            let low = try await fixture.request(fixture.imagePath("large.jpg", options: ["q:20"], extension: "jpg"))
            let high = try await fixture.request(fixture.imagePath("large.jpg", options: ["q:95"], extension: "jpg"))
            #expect(low.body.count < high.body.count)
            let perFormat = try await fixture.request(fixture.imagePath("large.jpg", options: ["fq:jpeg:20"], extension: "jpg"))
            #expect(perFormat.body == low.body)
        }
    }

    @Test func maxBytesLowersTheQualityUntilTheResultFits() async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let full = try await fixture.request(fixture.imagePath("large.jpg", options: ["q:95"], extension: "jpg"))
            let limit = full.body.count / 3
            let fitted = try await fixture.request(fixture.imagePath("large.jpg", options: ["q:95", "mb:\(limit)"], extension: "jpg"))
            #expect(fitted.status == 200)
            #expect(fitted.body.count <= limit, "\(fitted.body.count) > \(limit)")
        }
    }

    @Test func everySpellingOfOneMeaningIsOneResult() async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let first = try await fixture.request(fixture.imagePath("large.png", options: ["rs:fill:300:200", "q:80"], extension: "webp"))
            #expect(first.header("X-Magpie-Cache") != "memory")
            for spelling in [["resize:fill:300:200", "quality:80"], ["rt:fill", "w:300", "h:200", "q:80"], ["s:300:200:0", "rt:fill", "g:ce:0:0", "q:80"]] {
                let again = try await fixture.request(fixture.imagePath("large.png", options: spelling, extension: "webp"))
                #expect(again.header("X-Magpie-Cache") == "memory", "\(spelling)")
                #expect(again.body == first.body)
            }
            // Without q:80 it is WebP's default quality (79): another result.
            let other = try await fixture.request(fixture.imagePath("large.png", options: ["rs:fill:300:200"], extension: "webp"))
            #expect(other.header("X-Magpie-Cache") != "memory")
        }
    }

    @Test func anExpiredURLIs404AndALiveOneIsCachedNoLongerThanItLives() async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let past = Int(Date().timeIntervalSince1970) - 10
            let expired = try await fixture.request(fixture.imagePath("large.png", options: ["exp:\(past)"]))
            #expect(expired.status == 404)
            #expect(fixture.origin.totalRequests == 0)
            let soon = Int(Date().timeIntervalSince1970) + 120
            let live = try await fixture.request(fixture.imagePath("large.png", options: ["exp:\(soon)", "w:10"]))
            #expect(live.status == 200)
            let age = live.header("Cache-Control").flatMap { Int($0.split(separator: "=").last ?? "") } ?? -1
            #expect((100...120).contains(age), "\(live.header("Cache-Control") ?? "")")
        }
    }

    @Test func skipProcessingAnswersTheSourcesOwnBytes() async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let skipped = try await fixture.request(fixture.imagePath("large.png", options: ["skp:png", "w:100"]))
            #expect(skipped.body == Data(Self.assets["large.png"]!.bytes))
            let converted = try await fixture.request(fixture.imagePath("large.png", options: ["skp:png", "w:100"], extension: "jpg"))
            #expect(try Self.decoded(converted).width == 100)
        }
    }

    @Test func pagesSelectFramesAndDisableAnimationKeepsTheFirst() async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let two = try await fixture.request(fixture.imagePath("anim.gif", options: ["pg:1", "pgs:2"], extension: "webp"))
            #expect(try Self.decoded(two).frames.count == 2)
            let still = try await fixture.request(fixture.imagePath("anim.gif", options: ["da:1"], extension: "webp"))
            #expect(try Self.decoded(still).frames.count == 1)
            let past = try await fixture.request(fixture.imagePath("anim.gif", options: ["pg:9"], extension: "webp"))
            #expect(past.status == 422)
        }
    }

    @Test func aTranslucentBackgroundStaysTranslucentWhereTheFormatHasAlphaAndIsTheMatteOfAJPEG() async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let options = ["rs:fit:100:100", "pd:10", "bg:f00", "bga:0.5"]
            let png = try Self.decoded(try await fixture.request(fixture.imagePath("large.png", options: options, extension: "png")))
            #expect(png.pixels[0, 0] == RGBAColor(red: 255, green: 0, blue: 0, alpha: 128))
            #expect(png.pixels[50, 50].alpha == 255)
            let jpeg = try Self.decoded(try await fixture.request(fixture.imagePath("large.png", options: options, extension: "jpg")))
            let corner = jpeg.pixels[0, 0]
            #expect(corner.red > 240 && corner.green < 16 && corner.blue < 16, "flattened onto red, not white: \(corner)")
        }
    }

    @Test func theSourcesCopyrightIsKeptByDefaultAloneAndDroppedWithKcr0() async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            func exif(_ options: [String]) async throws -> ImageMetadata {
                try Self.decoded(try await fixture.request(fixture.imagePath("owned.jpg", options: options + ["w:100"], extension: "jpg"))).metadata
            }
            let stripped = try await exif([])
            let payload = try #require(stripped.exif)
            let fields = try #require(IFDReader(payload))
            #expect(fields.asciiValue(tag: 0x8298) == Array("(c) 2026 Ann Example\0".utf8))
            #expect(!stripped.hasGPS && fields.ifd0Entry(tag: 0x0112) == nil)
            #expect(try await exif(["kcr:0"]).exif == nil)
            #expect(try await exif(["sm:0"]).hasGPS)
            #expect(try await exif(["sm:1", "kcr:0", "sm:0"]).hasGPS, "keeping everything keeps the copyright too")
        }
    }

    @Test func theConfiguredWatermarkIsDrawnWhereTheOptionSays() async throws {
        let red = try ImageCoderRegistry.shared.encode(Image(pixels: try PixelBuffer(width: 20, height: 20, fill: RGBAColor(red: 255, green: 0, blue: 0))), as: .png)
        try await ServerFixture.with(extraAssets: Self.assets, configure: { $0.watermark = red }) { fixture in
            let marked = try await fixture.request(fixture.imagePath("large.png", options: ["wm:1:soea"], extension: "png"))
            let pixels = try Self.decoded(marked).pixels.rgbaBytes
            let corner = (299 * 400 + 399) * 4
            #expect(Array(pixels[corner..<corner + 4]) == [255, 0, 0, 255])
            let plain = try await fixture.request(fixture.imagePath("large.png", extension: "png"))
            #expect(marked.body != plain.body)
        }
    }

    @Test(arguments: ["w:-1", "rs:squash:1:1", "g:nowhere", "wm:2", "el:maybe", "exp:tomorrow"])
    func badOptionsAre400sNamingTheOption(option: String) async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let answer = try await fixture.request(fixture.imagePath("large.png", options: [option]))
            #expect(answer.status == 400)
            #expect(answer.text.contains("\"\(option)\""), "\(answer.text)")
            #expect(fixture.origin.totalRequests == 0)
        }
    }

    @Test func enforcedFormatsOverrideTheURLsFormatForClientsThatAcceptThem() async throws {
        try await ServerFixture.with(extraAssets: Self.assets, configure: { $0.enforcedFormats = [.webp] }) { fixture in
            let path = fixture.imagePath("large.png", options: ["w:50"], extension: "png")
            let browser = try await fixture.request(path, headers: [("Accept", "image/webp,*/*")])
            #expect(browser.header("Content-Type") == "image/webp" && browser.header("Vary") == "Accept")
            let other = try await fixture.request(path, headers: [("Accept", "*/*")])
            #expect(other.header("Content-Type") == "image/png")
        }
    }

    @Test func withoutETagsNoneIsSent() async throws {
        try await ServerFixture.with(extraAssets: Self.assets, configure: { $0.sendsETag = false }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("large.png", options: ["w:50"]))
            #expect(answer.status == 200 && answer.header("ETag") == nil)
        }
    }

    @Test func securityOptionsAre403UnlessAllowedAndThenApply() async throws {
        try await ServerFixture.with(extraAssets: Self.assets) { fixture in
            let refused = try await fixture.request(fixture.imagePath("large.png", options: ["msr:0.01"]))
            #expect(refused.status == 403)
        }
        try await ServerFixture.with(extraAssets: Self.assets, configure: { $0.allowsSecurityOptions = true }) { fixture in
            // 400×300 is 0.12 MP: over 0.01, within 1.
            let statuses = [
                try await fixture.request(fixture.imagePath("large.png", options: ["msr:0.01"])).status,
                try await fixture.request(fixture.imagePath("large.png", options: ["msr:1"])).status,
                try await fixture.request(fixture.imagePath("large.png", options: ["msfs:100"])).status,
                try await fixture.request(fixture.imagePath("anim.gif", options: ["maf:2"])).status,
            ]
            #expect(statuses == [422, 200, 413, 422])
        }
    }
}
