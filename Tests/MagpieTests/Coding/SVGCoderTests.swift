import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// SVGCoder: documents are written here; librsvg renders them for real.
@Suite("SVG coder")
struct SVGCoderTests {
    let coder = SVGCoder()

    static func svg(_ attributes: String, _ body: String = "") -> Data {
        Data("<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" \(attributes)>\(body)</svg>".utf8)
    }


    static func alphas(_ image: Image) -> [UInt8] {
        image.pixels.rgbaBytes.enumerated().filter { $0.offset % 4 == 3 }.map(\.element)
    }

    @Test("intrinsic size: width/height in px at 96 dpi, physical units converted, else the viewBox")
    func intrinsicSize() throws {
        let cases: [(String, Int, Int)] = [
            ("width=\"40\" height=\"20\"", 40, 20),
            ("width=\"1in\" height=\"0.5in\"", 96, 48),
            ("viewBox=\"0 0 30 15\"", 30, 15),
            ("width=\"100%\" height=\"100%\" viewBox=\"5 5 12 7\"", 12, 7),
        ]
        for (attributes, width, height) in cases {
            let data = Self.svg(attributes, "<rect width=\"5\" height=\"5\"/>")
            let image = try coder.decode(data, options: .default)
            #expect(image.width == width && image.height == height && image.format == .svg, "\(attributes)")
            #expect(try ImageCoderRegistry.shared.header(of: data) == ImageHeader(format: .svg, width: width, height: height, frameCount: 1))
        }
    }

    @Test("pixels are straight RGBA on a transparent background (cairo's premultiplied BGRA converted)")
    func pixels() throws {
        let data = Self.svg("width=\"4\" height=\"2\"", "<rect width=\"2\" height=\"2\" fill=\"#ff8000\" fill-opacity=\"0.5\"/>")
        let image = try ImageCoderRegistry.shared.decode(data)
        #expect(image.format == .svg)
        let left = image.pixels[0, 0], right = image.pixels[3, 1]
        #expect(left.red == 255 && abs(Int(left.green) - 128) <= 1 && left.blue == 0 && abs(Int(left.alpha) - 128) <= 1)
        #expect(right.alpha == 0)
    }

    @Test("with a target size the document is vector-rendered at that size: a 16x16 drawing at 256x256 has hard edges")
    func targetSizeIsSharp() throws {
        let data = Self.svg(
            "width=\"16\" height=\"16\" viewBox=\"0 0 16 16\"",
            "<rect width=\"8\" height=\"16\" fill=\"red\"/><circle cx=\"12\" cy=\"8\" r=\"3.5\" fill=\"blue\"/>")
        var options = ImageDecodingOptions.default
        options.targetSize = PixelSize(width: 256, height: 256)
        let image = try coder.decode(data, options: options)
        #expect(image.width == 256 && image.height == 256)
        #expect(image.pixels[127, 100] == RGBAColor(red: 255, green: 0, blue: 0))
        #expect(image.pixels[128, 100].alpha == 0)
        // A vector circle of radius 56 px has about 2πr ≈ 350 edge pixels; an upscaled 16 px bitmap would smear its
        // edge over a band 16 px wide (thousands of partly transparent pixels).
        let partial = Self.alphas(image).filter { $0 != 0 && $0 != 255 }.count
        #expect(partial > 0 && partial < 1500, "\(partial) partly transparent pixels")
    }

    @Test("a target size is fitted or filled with the aspect ratio kept, also for documents without a viewBox")
    func targetSizeModes() throws {
        let data = Self.svg("width=\"20\" height=\"10\"", "<rect width=\"20\" height=\"10\" fill=\"lime\"/>")
        var options = ImageDecodingOptions.default
        options.targetSize = PixelSize(width: 40, height: 40)
        let fit = try coder.decode(data, options: options)
        #expect(fit.width == 40 && fit.height == 20)
        #expect(fit.pixels[39, 19].alpha == 255)
        options.contentMode = .aspectFill
        let fill = try coder.decode(data, options: options)
        #expect(fill.width == 80 && fill.height == 40)
        #expect(fill.pixels[79, 39].alpha == 255)
    }

    @Test("no external resource is loaded: file: and http: hrefs render nothing, while a data: URL image does render")
    func noExternalLoads() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-svg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let red = try Image(width: 4, height: 4, rgba: [UInt8](repeating: 0, count: 64).enumerated().map { $0.offset % 4 == 1 || $0.offset % 4 == 2 ? 0 : 255 })
        let png = try ImageCoderRegistry.shared.encode(red, as: .png)
        let file = folder.appendingPathComponent("red.png")
        try png.write(to: file)
        let control = Self.svg("width=\"10\" height=\"10\"", "<image width=\"10\" height=\"10\" href=\"data:image/png;base64,\(png.base64EncodedString())\"/>")
        #expect(try coder.decode(control, options: .default).pixels[5, 5] == RGBAColor(red: 255, green: 0, blue: 0))
        let hrefs = [file.absoluteString, "red.png", file.path, "http://127.0.0.1:9/red.png"]
        for href in hrefs {
            let body = "<image width=\"10\" height=\"10\" href=\"\(href)\"/><image width=\"10\" height=\"10\" xlink:href=\"\(href)\"/>"
            let image = try coder.decode(Self.svg("width=\"10\" height=\"10\"", body), options: .default)
            #expect(Self.alphas(image).allSatisfy { $0 == 0 }, "\(href) was loaded")
        }
    }

    @Test("an entity-expansion bomb (billion laughs), absurd nesting and too many elements are refused fast as corruptData")
    func xmlBombs() throws {
        var entities = "<!ENTITY e0 \"lollollollollollollollollollol\">"
        for level in 1...10 { entities += "<!ENTITY e\(level) \"" + String(repeating: "&e\(level - 1);", count: 10) + "\">" }
        let laughs = Data("<?xml version=\"1.0\"?><!DOCTYPE svg [\(entities)]><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><text>&e10;</text></svg>".utf8)
        let deep = Self.svg("width=\"10\" height=\"10\"", String(repeating: "<g>", count: 50_000) + String(repeating: "</g>", count: 50_000))
        let many = Self.svg("width=\"10\" height=\"10\"", String(repeating: "<g/>", count: 900_000))
        // The decode fuzzer's second find: 239,000 empty rects cost librsvg 2.5 s; Magpie's cap is 100,000.
        let rects = Self.svg("width=\"10\" height=\"10\"", String(repeating: "<rect/>", count: 150_000))
        for (name, data) in [
            ("billion laughs", laughs), ("deep nesting", deep), ("900,000 elements, under librsvg's own limit", many),
            ("150,000 rects", rects),
        ] {
            // Refused before librsvg builds the tree (no timing asserted: the outcome says which check refused it).
            guard case .corruptData(.svg, _) = TestImages.decodingReason({ try coder.decode(data, options: .default) }) else {
                Issue.record("\(name) should be corruptData")
                continue
            }
        }
    }

    @Test("a drawing's few namespace entities decode; more than 64 entity declarations are refused before librsvg")
    func entityDeclarations() throws {
        let svgNamespace = "http://www.w3.org/2000/svg"
        func document(_ declarations: Int, prefix: String = "") -> Data {
            let entities = (0..<declarations).map { "<!ENTITY ns_\($0) \"\(svgNamespace)\">" }.joined()
            return Data("<?xml version=\"1.0\"?><!DOCTYPE svg [\(prefix)\(entities)]><svg xmlns=\"&ns_0;\" width=\"4\" height=\"4\"><rect width=\"4\" height=\"4\" fill=\"red\"/></svg>".utf8)
        }
        let image = try coder.decode(document(3), options: .default)
        #expect(image.pixels[1, 1] == RGBAColor(red: 255, green: 0, blue: 0))
        guard case .corruptData(.svg, let message) = TestImages.decodingReason({ try coder.decode(document(65), options: .default) }) else {
            Issue.record("65 entity declarations should be corruptData")
            return
        }
        #expect("\(message)".contains("entities"))
        #expect(throws: Never.self) { try coder.decode(document(64), options: .default) }
        // Compressed documents are counted in 64 KiB chunks: a declaration across a chunk boundary still counts.
        guard Self.hasGzip else { return }
        let head = "<?xml version=\"1.0\"?><!DOCTYPE svg [<!-- "
        let filler = String(repeating: "x", count: 65_536 - 3 - head.utf8.count - " -->".utf8.count)
        let straddling = document(65, prefix: "<!-- \(filler) -->")
        #expect(straddling.range(of: Data("<!ENTITY".utf8))?.lowerBound == 65_536 - 3)
        guard case .corruptData(.svg, _) = TestImages.decodingReason({ try coder.decode(try Self.gzipped(straddling), options: .default) }) else {
            Issue.record("65 compressed declarations, one across a chunk boundary, should be corruptData")
            return
        }
    }

    @Test("the render size obeys the pixel limits before the surface is allocated, target sizes included")
    func limits() throws {
        let huge = Self.svg("width=\"100000\" height=\"100000\"")
        guard case .tooLarge(.svg, _) = TestImages.decodingReason({ try coder.decode(huge, options: .default) }) else {
            Issue.record("a 100000x100000 document should be tooLarge")
            return
        }
        var options = ImageDecodingOptions.default
        options.limits = ImageDecodingLimits(maxPixelsPerFrame: 399)
        guard case .tooLarge = TestImages.decodingReason({ try coder.decode(Self.svg("width=\"20\" height=\"20\""), options: options) }) else {
            Issue.record("400 pixels over a 399-pixel limit should be tooLarge")
            return
        }
        options.limits = ImageDecodingLimits(maxPixelsPerFrame: 1_000_000)
        options.targetSize = PixelSize(width: 2000, height: 2000)
        guard case .tooLarge = TestImages.decodingReason({ try coder.decode(Self.svg("width=\"20\" height=\"20\""), options: options) }) else {
            Issue.record("a 2000x2000 target over a 1 MP limit should be tooLarge")
            return
        }
        #expect(try ImageCoderRegistry.shared.header(of: huge) == ImageHeader(format: .svg, width: 100_000, height: 100_000, frameCount: 1))
    }

    @Test("malformed XML is corruptData")
    func malformed() throws {
        let data = Data("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><rect".utf8)
        guard case .corruptData(.svg, _) = TestImages.decodingReason({ try coder.decode(data, options: .default) }) else {
            Issue.record("an unclosed document should be corruptData")
            return
        }
    }

    static let hasGzip = FileManager.default.isExecutableFile(atPath: "/bin/gzip")

    /// `data` compressed by /bin/gzip.
    static func gzipped(_ data: Data) throws -> Data {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-svgz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("a.svg")
        try data.write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-n", file.path]
        try process.run()
        process.waitUntilExit()
        return try Data(contentsOf: folder.appendingPathComponent("a.svg.gz"))
    }

    @Test("gzip-compressed SVG (.svgz) is recognised and rendered", .enabled(if: hasGzip))
    func gzip() throws {
        let compressed = try Self.gzipped(Self.svg("width=\"6\" height=\"3\"", "<rect width=\"6\" height=\"3\" fill=\"blue\"/>"))
        #expect(coder.canDecode(compressed))
        #expect(!coder.canDecode(Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3])))
        let image = try ImageCoderRegistry.shared.decode(compressed)
        #expect(image.format == .svg && image.width == 6 && image.pixels[2, 1] == RGBAColor(red: 0, green: 0, blue: 255))
    }
}
