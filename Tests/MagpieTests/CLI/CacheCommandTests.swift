import Foundation
import Testing

@testable import MagpieCore

/// `magpie cache ...` on folders and names that may hold no cache.
struct CacheCommandTests {
    func magpie(_ arguments: [String]) throws -> ProcessRun { try ProcessRun.built("magpie", arguments) }

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-cachecmd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func contents(of folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    @Test func everySubcommandOnAFolderOrNameWithoutACacheExitsOneWithOneLineAndCreatesNothing() throws {
        let empty = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: empty) }
        let other = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: other) }
        // A folder that does hold a cache, just not the one asked for.
        _ = try DiskStorage(config: .init(name: "real", directory: other))

        for command in ["stats", "verify", "clean", "clear"] {
            let prefix = command == "verify" ? "cache verify: " : "cache: "
            let run = try magpie(["cache", command, "--cache-dir", empty.path])
            #expect(run.status == 1, "\(command)")
            #expect(run.stdout.isEmpty, "\(command)")
            #expect(run.stderr == "\(prefix)no cache named default in \(empty.path)\n", "\(command)")
            #expect(try contents(of: empty).isEmpty, "\(command) created files")

            let missing = try magpie(["cache", command, "--cache-dir", other.path, "--name", "nope"])
            #expect(missing.status == 1, "\(command)")
            #expect(missing.stderr == "\(prefix)no cache named nope in \(other.path)\n", "\(command)")
            #expect(try contents(of: other) == ["real"], "\(command) created files")

            let json = try magpie(["cache", command, "--json", "--cache-dir", empty.path])
            #expect(json.status == 1)
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(object?["error"] as? String == "no cache named default in \(empty.path)", "\(command)")
            #expect(try contents(of: empty).isEmpty)
        }
        let absent = empty.appendingPathComponent("not-there")
        #expect(try magpie(["cache", "stats", "--cache-dir", absent.path]).status == 1)
        #expect(!FileManager.default.fileExists(atPath: absent.path))
    }

    @Test func cleanTakesASizeLimitWithUnitsAndEvictsDownToHalfOfIt() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try DiskStorage(config: .init(name: "c", directory: folder))
        for key in ["a", "b", "c", "d"] { try disk.store(Data(repeating: 1, count: 1000), forKey: key) }

        let run = try magpie(["cache", "clean", "--cache-dir", folder.path, "--name", "c", "--json", "--size-limit", "3kB"])
        #expect(run.status == 0, "\(run.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        // 4000 bytes over a 3000-byte limit: down to half of it, 1500, keeps one entry.
        #expect(object?["evicted"] as? Int == 3 && object?["entries"] as? Int == 1 && object?["bytes"] as? Int == 1000)

        let help = try magpie(["cache", "clean", "--help"])
        // Help text is wrapped to the terminal: compare with the line breaks taken out.
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("evicts the least recently used entries down to half of --size-limit"))
        let bad = try magpie(["cache", "clean", "--cache-dir", folder.path, "--name", "c", "--size-limit", "-1"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--size-limit"))
    }
}
