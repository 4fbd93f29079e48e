import Foundation
import Testing

@testable import MagpieCore

/// `magpie info` and `convert` with a decode pixel limit.
struct InfoCommandTests {
    func magpie(_ arguments: [String]) throws -> ProcessRun { try ProcessRun.built("magpie", arguments) }

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-info-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func object(_ line: Substring) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
    }

    @Test func anImageOverMaxPixelsIsDescribedFromItsHeaderSaysItExceedsTheLimitAndExitsOne() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("big.png")
        let png = try ImageCoderRegistry.shared.encode(Image(pixels: try TestImages.gradient(width: 120, height: 80)), as: .png)
        try png.write(to: file)

        let text = try magpie(["info", "--max-pixels", "9000", file.path])
        #expect(text.status == 1)
        #expect(text.stderr == "\(file.path): PNG 120x80, 1 frame(s), \(png.count) bytes: exceeds the decode limit: "
            + "9600 pixels, more than --max-pixels 9000; not decoded\n")

        let json = try magpie(["info", "--json", "--max-pixels", "9000", file.path])
        #expect(json.status == 1)
        let record = try object(Substring(json.stdout.trimmingCharacters(in: .newlines)))
        #expect(record["format"] as? String == "png" && record["width"] as? Int == 120 && record["height"] as? Int == 80)
        #expect(record["frames"] as? Int == 1 && record["bytes"] as? Int == png.count)
        #expect((record["error"] as? String)?.contains("exceeds the decode limit") == true)

        // At the limit it decodes as before.
        #expect(try magpie(["info", "--max-pixels", "9600", file.path]).status == 0)
        #expect(try magpie(["info", "--max-pixels", "0", file.path]).status == 2)
    }

    @Test func overTheLimitEverySampleFormatReportsTheSizeAndFramesAFullDecodeFinds() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try magpie(["sample", folder.path]).status == 0)
        let files = ["photo.jpg", "badge.png", "spinner.gif", "spinner.png", "spinner.webp", "photo.webp"]
            .map { folder.appendingPathComponent($0).path }
        let decoded = try magpie(["info", "--json"] + files)
        #expect(decoded.status == 0)
        let limited = try magpie(["info", "--json", "--max-pixels", "1"] + files)
        #expect(limited.status == 1)
        let full = try decoded.stdout.split(separator: "\n").map(object)
        let headers = try limited.stdout.split(separator: "\n").map(object)
        #expect(full.count == files.count && headers.count == files.count)
        for (whole, header) in zip(full, headers) {
            for key in ["path", "format", "width", "height", "frames", "bytes"] {
                #expect("\(whole[key] ?? "-")" == "\(header[key] ?? "-")", "\(whole["path"] ?? "") \(key)")
            }
            #expect(header["error"] != nil)
        }
    }

    @Test func convertRefusesAnInputOverMaxPixels() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("big.png")
        let image = Image(pixels: try TestImages.gradient(width: 120, height: 80))
        try ImageCoderRegistry.shared.encode(image, as: .png).write(to: file)
        let out = folder.appendingPathComponent("out.jpg")
        let run = try magpie(["convert", "--max-pixels", "9000", file.path, out.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("too large"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        #expect(try magpie(["convert", "--max-pixels", "9600", file.path, out.path]).status == 0)
    }
}
