import MagpieServer
import Testing

/// Output format negotiation: Accept handling, the source's format, alpha, animation, and when Vary: Accept is needed.
struct OutputFormatChoiceTests {
    static let chrome = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
    static let firefoxOld = "image/webp,*/*"

    /// One row: Accept, source format, alpha, animated → format, first frame only.
    struct Row: Sendable, CustomTestStringConvertible {
        let accept: String?
        let source: ImageFormat
        var alpha = false
        var animated = false
        let expected: ImageFormat
        var firstFrameOnly = false
        var testDescription: String {
            "\(accept ?? "no Accept") \(source)\(alpha ? " alpha" : "")\(animated ? " animated" : "") → \(expected)"
        }
    }

    static let autoTable: [Row] = [
        Row(accept: chrome, source: .jpeg, expected: .avif),
        Row(accept: firefoxOld, source: .jpeg, expected: .webp),
        Row(accept: "image/avif;q=0, image/webp", source: .jpeg, expected: .webp),
        Row(accept: "image/avif;q=0,image/webp;q=0,image/*,*/*", source: .png, expected: .png),
        Row(accept: "image/*", source: .jpeg, expected: .jpeg),
        Row(accept: "*/*", source: .png, alpha: true, expected: .png),
        Row(accept: nil, source: .jpeg, expected: .jpeg),
        Row(accept: "", source: .jpeg, expected: .jpeg),
        Row(accept: "IMAGE/AVIF", source: .jpeg, expected: .avif),
        Row(accept: "image/avif;q=0.5, image/webp;q=0.9", source: .jpeg, expected: .webp),
        Row(accept: "image/webp;q=0.7, image/avif;q=0.7", source: .jpeg, expected: .avif),
        Row(accept: "image/avif;q=abc", source: .jpeg, expected: .jpeg),
        Row(accept: "image/avif;q=2", source: .jpeg, expected: .jpeg),
        Row(accept: "image/avif ; Q=0.000", source: .jpeg, expected: .jpeg),
        Row(accept: "image/avif, image/avif;q=0", source: .jpeg, expected: .jpeg),
        // Sources the registry cannot write, or that the client did not ask for.
        Row(accept: nil, source: .heic, expected: .jpeg),
        Row(accept: nil, source: .tiff, alpha: true, expected: .png),
        Row(accept: nil, source: .svg, alpha: true, expected: .png),
        Row(accept: nil, source: .webp, expected: .jpeg),
        Row(accept: nil, source: .webp, alpha: true, expected: .png),
        Row(accept: nil, source: .avif, expected: .jpeg),
        Row(accept: nil, source: .jxl, expected: .jpeg),
        Row(accept: "image/jxl", source: .jxl, alpha: true, expected: .jxl),
        Row(accept: "image/jxl", source: .jpeg, expected: .jpeg),
        Row(accept: nil, source: .unknown, expected: .jpeg),
        // A JPEG source given alpha by processing (round corners) becomes PNG: JPEG would fill the corners white.
        Row(accept: nil, source: .jpeg, alpha: true, expected: .png),
        // GIFs: animated ones stay GIF unless AVIF or WebP is accepted; still ones become PNG.
        Row(accept: nil, source: .gif, animated: true, expected: .gif),
        Row(accept: "image/*", source: .gif, alpha: true, animated: true, expected: .gif),
        Row(accept: firefoxOld, source: .gif, animated: true, expected: .webp),
        Row(accept: chrome, source: .gif, animated: true, expected: .avif),
        Row(accept: nil, source: .gif, expected: .png),
        Row(accept: nil, source: .gif, alpha: true, expected: .png),
        Row(accept: nil, source: .png, animated: true, expected: .png),
        Row(accept: nil, source: .webp, animated: true, expected: .gif),
    ]

    @Test(arguments: autoTable)
    func autoPicksAVIFThenWebPWhenAcceptedThenTheSourceFormat(row: Row) {
        let choice = OutputFormatChoice.negotiate(
            .auto, accept: row.accept, source: row.source, hasAlpha: row.alpha, isAnimated: row.animated)
        #expect(choice == OutputFormatChoice(format: row.expected, firstFrameOnly: row.firstFrameOnly, variesOnAccept: true))
    }

    @Test(arguments: [
        (ImageFormat.jpeg, true), (.png, false), (.gif, false), (.webp, false), (.avif, false), (.jxl, false),
    ])
    func anExplicitFormatIsUsedAsItIsAndOnlyJPEGDropsFramesOfAnAnimation(format: ImageFormat, dropsFrames: Bool) {
        let animated = OutputFormatChoice.negotiate(
            .fixed(format), accept: Self.chrome, source: .gif, hasAlpha: true, isAnimated: true)
        #expect(animated == OutputFormatChoice(format: format, firstFrameOnly: dropsFrames, variesOnAccept: false))
        let still = OutputFormatChoice.negotiate(.fixed(format), accept: nil, source: .png, hasAlpha: false, isAnimated: false)
        #expect(still == OutputFormatChoice(format: format, firstFrameOnly: false, variesOnAccept: false))
    }

    @Test func withoutAVIFAndWebPEncodersAcceptCannotMatterSoNoVaryIsNeeded() {
        let registry = ImageCoderRegistry(coders: [JPEGCoder(), PNGCoder(), GIFCoder()])
        let choice = OutputFormatChoice.negotiate(
            .auto, accept: Self.chrome, source: .jpeg, hasAlpha: false, isAnimated: false, registry: registry)
        #expect(choice == OutputFormatChoice(format: .jpeg, firstFrameOnly: false, variesOnAccept: false))
    }

    @Test func anAcceptedFormatWithoutEncoderIsSkipped() {
        let registry = ImageCoderRegistry(coders: [JPEGCoder(), PNGCoder(), GIFCoder(), WebPCoder()])
        let choice = OutputFormatChoice.negotiate(
            .auto, accept: Self.chrome, source: .jpeg, hasAlpha: false, isAnimated: false, registry: registry)
        #expect(choice == OutputFormatChoice(format: .webp, firstFrameOnly: false, variesOnAccept: true))
    }

    @Test func framesFirstMakesAnAnimationAStillBeforeNegotiating() throws {
        let options = try ServeOptions.parse(["frames:first"], fileExtension: nil, presets: [:])
        let choice = options.outputFormat(accept: nil, source: .gif, hasAlpha: false, isAnimated: true)
        #expect(choice == OutputFormatChoice(format: .png, firstFrameOnly: true, variesOnAccept: true))
        let webp = options.outputFormat(accept: "image/webp", source: .gif, hasAlpha: false, isAnimated: true)
        #expect(webp == OutputFormatChoice(format: .webp, firstFrameOnly: true, variesOnAccept: true))
    }

    @Test func anExplicitJPEGForAnAnimationFromTheURLWritesTheFirstFrame() throws {
        let options = try ServeOptions.parse([], fileExtension: "jpg", presets: [:])
        let choice = options.outputFormat(accept: Self.chrome, source: .gif, hasAlpha: false, isAnimated: true)
        #expect(choice == OutputFormatChoice(format: .jpeg, firstFrameOnly: true, variesOnAccept: false))
        #expect(options.encodingOptions(for: choice).onlyFirstFrame)
    }
}
