import Foundation
import Testing

/// Runs the built `magpie` executable as a user would.
struct MagpieCLITests {

    struct Run { var status: Int32; var stdout: String; var stderr: String }

    func magpie(_ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = try BuiltProducts.executable("magpie")
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self))
    }

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test
    func infoPrintsOneJSONObjectPerFileAndExitsOneOnFailure() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try magpie(["sample", folder.path]).status == 0)
        let ok = try magpie(["info", "--json", folder.appendingPathComponent("spinner.gif").path])
        #expect(ok.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(ok.stdout.utf8)) as? [String: Any]
        #expect(Set(object?.keys.map { $0 } ?? []) == ["path", "format", "width", "height", "frames", "loopCount", "bytes"])
        #expect(object?["format"] as? String == "gif" && object?["frames"] as? Int == 8 && object?["loopCount"] as? Int == 0)

        let bad = try magpie(["info", "--json", folder.appendingPathComponent("photo.jpg").path,
                              folder.appendingPathComponent("truncated.jpg").path])
        #expect(bad.status == 1)
        let lines = bad.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let failure = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any]
        #expect((failure?["error"] as? String)?.contains("truncated JPEG") == true)
    }

    @Test
    func usageErrorsExitWithTwo() throws {
        #expect(try magpie(["info"]).status == 2)
        #expect(try magpie(["convert", "a.png", "b.png", "--quality", "0"]).status == 2)
        #expect(try magpie(["convert", "a.png", "b.unknown"]).status == 2)
    }

    @Test
    func convertShrinksToFitAndPicksFormatFromExtension() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try magpie(["sample", folder.path])
        let output = folder.appendingPathComponent("thumb.webp")
        let run = try magpie(["convert", folder.appendingPathComponent("photo.jpg").path, output.path, "--max-size", "200x200"])
        #expect(run.status == 0, "\(run.stderr)")
        let info = try magpie(["info", "--json", output.path])
        let object = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        #expect(object?["format"] as? String == "webp" && object?["width"] as? Int == 200 && object?["height"] as? Int == 150)
    }
}
