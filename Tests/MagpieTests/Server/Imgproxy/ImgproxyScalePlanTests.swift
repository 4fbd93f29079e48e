import Testing

@testable import MagpieCore
@testable import MagpieServer

/// imgproxy's size arithmetic, checked against results worked out by hand from its rules (and against imgproxy's
/// documentation where it gives one).
struct ImgproxyScalePlanTests {
    static func plan(_ segments: [String], _ width: Int, _ height: Int) throws -> ImgproxyScalePlan {
        ImgproxyScalePlan(options: try ServeOptions.parse(segments, fileExtension: nil, presets: [:]).imgproxy,
                          input: PixelSize(width: width, height: height))
    }

    @Test(arguments: [
        // source, options, scaled size, result (scaled, cropped to the result crop)
        (1000, 500, ["rs:fit:300:200"], 300, 150, 300, 150),
        (1000, 500, ["rs:fill:300:200"], 400, 200, 300, 200),
        (1000, 500, ["rs:fill:300:200", "dpr:2"], 800, 400, 600, 400),
        (1000, 500, ["rs:force:300:200"], 300, 200, 300, 200),
        (1000, 500, ["rs:fill:300:0"], 300, 150, 300, 150),
        (500, 1000, ["rs:auto:300:200"], 100, 200, 100, 200),
        (1000, 500, ["rs:auto:300:200"], 400, 200, 300, 200),
        (200, 100, ["rs:fill:300:300"], 200, 100, 200, 100),
        (200, 100, ["rs:fill-down:300:300"], 200, 100, 100, 100),
        (200, 100, ["rs:fill:300:300:1"], 600, 300, 300, 300),
        (200, 100, ["rs:fit:300:300", "dpr:2"], 200, 100, 200, 100),
        (1000, 500, ["rs:fit:300:200", "z:0.5"], 150, 75, 150, 75),
        (1000, 500, ["w:100", "mh:200"], 400, 200, 100, 200),
        (1000, 500, ["w:300"], 300, 150, 300, 150),
        (1000, 500, ["h:100"], 200, 100, 200, 100),
        (1000, 500, [], 1000, 500, 1000, 500),
    ])
    func sizesFollowImgproxysRules(
        width: Int, height: Int, segments: [String], scaledWidth: Int, scaledHeight: Int, resultWidth: Int, resultHeight: Int
    ) throws {
        let plan = try Self.plan(segments, width, height)
        #expect(plan.scaled == PixelSize(width: scaledWidth, height: scaledHeight), "\(segments)")
        let result = PixelSize(
            width: plan.resultCrop.width > 0 ? min(plan.resultCrop.width, plan.scaled.width) : plan.scaled.width,
            height: plan.resultCrop.height > 0 ? min(plan.resultCrop.height, plan.scaled.height) : plan.scaled.height)
        #expect(result == PixelSize(width: resultWidth, height: resultHeight), "\(segments)")
    }

    @Test func theDPRIsCappedWhereItWouldEnlarge() throws {
        #expect(try Self.plan(["rs:fit:300:300", "dpr:2"], 200, 100).dpr == 1)
        #expect(try Self.plan(["rs:fit:300:300", "dpr:2"], 2000, 1000).dpr == 2)
        #expect(try Self.plan(["rs:fit:300:300", "dpr:3", "el:1"], 200, 100).dpr == 3)
    }
}
