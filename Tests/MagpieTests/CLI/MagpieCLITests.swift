import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// Runs the built `magpie` executable as a user would.
struct MagpieCLITests {

    func magpie(_ arguments: [String]) throws -> ProcessRun { try ProcessRun.built("magpie", arguments) }

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
        #expect(Set(object?.keys.map { $0 } ?? []) == [
            "path", "format", "width", "height", "frames", "loopCount", "bytes", "bitDepth", "hasAlpha", "colorProfile",
            "metadata",
        ])
        #expect(object?["colorProfile"] is NSNull && (object?["metadata"] as? [String]) == [])
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

    @Test
    func cacheStatsCleanAndClearReportEntriesBytesAndExpired() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let past = CacheClock { Date(timeIntervalSinceNow: -3600) }
        // No sweeps: the expired entry must still be there for `stats` to count.
        let old = try DiskStorage(config: .init(name: "c", directory: folder, sweepInterval: 0, clock: past))
        try old.store(Data(repeating: 1, count: 100), forKey: "expired", expiration: .seconds(60))
        let disk = try DiskStorage(config: .init(name: "c", directory: folder, sweepInterval: 0))
        try disk.store(Data(repeating: 2, count: 200), forKey: "a")
        try disk.store(Data(repeating: 3, count: 300), forKey: "b")

        func run(_ command: String) throws -> [String: Any] {
            let result = try magpie(["cache", command, "--cache-dir", folder.path, "--name", "c", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
        }
        let stats = try run("stats")
        #expect(stats["entries"] as? Int == 3 && stats["bytes"] as? Int == 600 && stats["expired"] as? Int == 1)
        let cleaned = try run("clean")
        #expect(cleaned["removedExpired"] as? Int == 1 && cleaned["entries"] as? Int == 2 && cleaned["bytes"] as? Int == 500)
        #expect(try run("clear")["entries"] as? Int == 0)
    }

    @Test
    func cacheVerifyListsDamagedEntriesAndOrphansExitsOneAndRepairLeavesACleanCache() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try DiskStorage(config: .init(name: "c", directory: folder))
        let png = try ImageCoderRegistry.shared.encode(try Image(width: 4, height: 4, rgba: [UInt8](repeating: 200, count: 64)), as: .png)
        try disk.store(png, forKey: "good.png")
        try disk.store(png, forKey: "flipped.png")
        try disk.store(Data("not an image".utf8), forKey: "text")
        let flipped = disk.fileURL(forKey: "flipped.png")
        var bytes = try Data(contentsOf: flipped)
        bytes[bytes.count / 2] ^= 0x55
        try bytes.write(to: flipped)
        let orphan = "entries/00/00" + String(repeating: "f", count: 62)
        try Data("stray".utf8).write(to: folder.appendingPathComponent("c/" + orphan))
        let location = ["--cache-dir", folder.path, "--name", "c"]

        let plain = try magpie(["cache", "verify"] + location)
        #expect(plain.status == 1, "\(plain.stderr)")
        let lines = plain.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "3 entries: 2 intact, 1 damaged, 1 orphans, 0 temporary files")
        #expect(lines.count == 3)
        #expect(lines.contains { $0.hasPrefix("damaged flipped.png (\(flipped.lastPathComponent)): checksum mismatch (index 0x") })
        #expect(lines.contains("orphan " + orphan))

        let decoded = try magpie(["cache", "verify", "--decode", "--json"] + location)
        #expect(decoded.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(decoded.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(object["checked"] as? Int == 3 && object["intact"] as? Int == 1 && object["damaged"] as? Int == 2)
        #expect(object["orphanFiles"] as? [String] == [orphan] && object["temporaryFiles"] as? Int == 0)
        let reasons = Dictionary(uniqueKeysWithValues: (object["damagedEntries"] as? [[String: String]] ?? []).map { ($0["key"] ?? "", $0["reason"] ?? "") })
        #expect(reasons["flipped.png"]?.hasPrefix("checksum mismatch") == true)
        #expect(reasons["text"]?.hasPrefix("decoding failed: unknown format") == true, "\(reasons)")

        let repair = try magpie(["cache", "verify", "--decode", "--repair"] + location)
        #expect(repair.status == 1, "damage found before the repair still counts")
        #expect(repair.stdout.hasSuffix("repaired: removed 2 damaged entries and 1 orphans\n"))
        let after = try magpie(["cache", "verify", "--decode"] + location)
        #expect(after.status == 0)
        #expect(after.stdout == "1 entries: 1 intact, 0 damaged, 0 orphans, 0 temporary files\n")
        #expect(try disk.value(forKey: "good.png") == png)

        let blocker = folder.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let unusable = try magpie(["cache", "verify", "--cache-dir", blocker.path])
        #expect(unusable.status == 1 && unusable.stdout.isEmpty)
        #expect(unusable.stderr.split(separator: "\n").count == 1 && unusable.stderr.hasPrefix("cache verify: "))
    }

    @Test
    func sampleJSONNamesEveryFileWithItsSniffedFormatAndAnUnwritableFolderExitsOneWithOneLine() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try magpie(["sample", "--json", folder.path])
        #expect(run.status == 0)
        let objects = run.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == 7)
        let formats = Dictionary(uniqueKeysWithValues: objects.map {
            (URL(fileURLWithPath: $0["path"] as? String ?? "").lastPathComponent, $0["format"] as? String ?? "")
        })
        #expect(formats["spinner.webp"] == "webp" && formats["spinner.png"] == "png" && formats["truncated.jpg"] == "jpeg")
        for object in objects {
            let size = try FileManager.default.attributesOfItem(atPath: object["path"] as? String ?? "")[.size] as? Int
            #expect(size == object["bytes"] as? Int)
        }

        let file = folder.appendingPathComponent("photo.jpg").path
        let failed = try magpie(["sample", file + "/inside"])
        #expect(failed.status == 1)
        #expect(failed.stderr == "sample: cannot create the folder \(file)/inside: Not a directory\n")
    }

    @Test
    func failuresPrintOneLineNamingTheFileAndWhy() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("missing.png").path
        let convert = try magpie(["convert", missing, folder.appendingPathComponent("out.png").path])
        #expect(convert.status == 1)
        #expect(convert.stderr == "\(missing): cannot read \(missing): No such file or directory\n")

        let info = try magpie(["info", folder.path])
        #expect(info.status == 1)
        #expect(info.stderr == "\(folder.path): cannot read \(folder.path): is a directory\n")

        // A cache folder that cannot be made: one line, exit 1, also with --json.
        let blocker = folder.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let cache = try magpie(["cache", "stats", "--cache-dir", blocker.path])
        #expect(cache.status == 1)
        #expect(cache.stderr.split(separator: "\n").count == 1 && cache.stderr.hasPrefix("cache: "))
        let cacheJSON = try magpie(["cache", "stats", "--json", "--cache-dir", blocker.path])
        #expect(cacheJSON.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(cacheJSON.stdout.utf8)) as? [String: Any]
        #expect((object?["error"] as? String)?.contains("no cache named default in \(blocker.path)") == true)
    }

    @Test
    func globalOptionsWorkBeforeOrAfterTheSubcommandAndVerboseLogsTheLibraryToStderr() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try magpie(["sample", folder.path])
        let cacheRoot = folder.appendingPathComponent("caches").path
        let photo = folder.appendingPathComponent("badge.png").path

        let quiet = try magpie(["fetch", "--cache-dir", cacheRoot, photo])
        #expect(quiet.status == 0)
        #expect(quiet.stderr.isEmpty)
        // --cache-dir belongs to the commands that use a cache: after the subcommand.
        let verbose = try magpie(["-vv", "fetch", "--cache-dir", cacheRoot, photo])
        #expect(verbose.status == 0)
        #expect(verbose.stderr.contains("debug magpie.manager") && verbose.stderr.contains("retrieved"))
        #expect(verbose.stdout.contains("from the disk cache"), "--cache-dir after the subcommand reached it")
        let stats = try magpie(["--no-color", "cache", "stats", "--json", "--cache-dir", cacheRoot])
        let object = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        #expect(object?["entries"] as? Int == 1)
    }
}
