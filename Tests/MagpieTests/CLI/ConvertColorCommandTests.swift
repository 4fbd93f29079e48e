import Foundation
import Testing

@testable import MagpieCore

/// `magpie convert --color/--metadata` and `magpie info`'s colour keys, on the corpus's Display P3 JPEG.
@Suite(.enabled(if: Corpus.directory != nil, "../shared/corpus is absent"))
struct ConvertColorCommandTests {
    func magpie(_ arguments: [String]) throws -> ProcessRun { try ProcessRun.built("magpie", arguments) }

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-colour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    let p3JPEG = Corpus.directory?.appendingPathComponent("icc/tower-displayp3.jpg").path ?? ""

    @Test func convertWithColorSRGBWritesNoProfileAndMatchesTheCorpusSRGBGrid() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("srgb.png")
        let run = try magpie(["convert", p3JPEG, out.path, "--color", "srgb"])
        #expect(run.status == 0, "\(run.stderr)")
        let image = try ImageCoderRegistry.shared.decode(Data(contentsOf: out))
        #expect(image.colorProfile == nil)
        let reference = try #require(Corpus.table("COLOUR.tsv").first { $0["path"] == "icc/tower-displayp3.jpg" }?["srgb_grid8"])
        let worst = zip(PixelDigest.grid8(image.pixels), PixelDigest.parseGrid(reference)).map { abs($0 - $1) }.max() ?? 99
        #expect(worst <= 3, "grid differs by \(worst)")
    }

    @Test func convertKeepsTheProfileByDefaultAndStripRemovesIt() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try ImageCoderRegistry.shared.decode(Data(contentsOf: URL(fileURLWithPath: p3JPEG)))
        var targets = ["webp", "png", "jpg"]
        if ImageCoderRegistry.shared.canEncode(.avif) { targets.append("avif") }
        if ImageCoderRegistry.shared.canEncode(.jxl) { targets.append("jxl") }
        var input = p3JPEG
        for ext in targets {
            // A chain: JPEG → WebP → PNG → JPEG (→ AVIF → JPEG XL), each step from the previous output.
            let out = folder.appendingPathComponent("kept.\(ext)").path
            let run = try magpie(["convert", input, out])
            #expect(run.status == 0, "\(ext): \(run.stderr)")
            let image = try ImageCoderRegistry.shared.decode(Data(contentsOf: URL(fileURLWithPath: out)))
            if ext == "jxl" {
                // libjxl stores a recognised profile as its own colour encoding and hands back an equivalent ICC.
                #expect(image.colorProfile?.iccData != nil, "jxl: no profile")
            } else {
                #expect(image.colorProfile?.name == "Display P3", "\(ext): \(image.colorProfile?.name ?? "no profile")")
                #expect(image.colorProfile?.iccData == source.colorProfile?.iccData, "\(ext)")
            }
            // Whatever the container made of it, the colours the profile means are the source's.
            let seen = PixelDigest.grid8(ColorConverter.convertedToSRGB(image).pixels)
            let meant = PixelDigest.grid8(ColorConverter.convertedToSRGB(source).pixels)
            let worst = zip(seen, meant).map { abs($0 - $1) }.max() ?? 99
            #expect(worst <= 6, "\(ext): colours moved by up to \(worst)")
            input = out
        }
        let stripped = folder.appendingPathComponent("stripped.webp").path
        #expect(try magpie(["convert", p3JPEG, stripped, "--metadata", "strip"]).status == 0)
        #expect(try ImageCoderRegistry.shared.decode(Data(contentsOf: URL(fileURLWithPath: stripped))).colorProfile == nil)
    }

    @Test func infoReportsBitDepthAlphaProfileAndMetadata() throws {
        let run = try magpie(["info", "--json", p3JPEG])
        #expect(run.status == 0)
        let record = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(record["bitDepth"] as? Int == 8 && record["hasAlpha"] as? Bool == false)
        #expect(record["colorProfile"] as? String == "Display P3")
        #expect((record["metadata"] as? [String])?.contains("icc") == true)
        #expect(record["entries"] == nil)
        #expect(try magpie(["convert", p3JPEG, "/tmp/x.png", "--color", "wide"]).status == 2)
        #expect(try magpie(["convert", p3JPEG, "/tmp/x.png", "--speed", "11"]).status == 2)
    }
}
