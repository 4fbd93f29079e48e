import Foundation
import Testing

/// Which command offers which option, and how option values are checked.
struct CommandOptionsTests {
    func magpie(_ arguments: [String]) throws -> ProcessRun { try ProcessRun.built("magpie", arguments) }

    func help(_ command: [String]) throws -> String {
        let run = try magpie(command + ["--help"])
        #expect(run.status == 0, "\(command)")
        return run.stdout
    }

    @Test func cacheDirIsOfferedOnlyByCommandsThatUseACache() throws {
        for command in [["info"], ["convert"], ["sample"]] {
            #expect(try !help(command).contains("--cache-dir"), "\(command)")
        }
        for command in [["fetch"], ["prefetch"], ["show"], ["demo"], ["cache", "stats"], ["cache", "clean"], ["cache", "clear"],
                        ["cache", "verify"]] {
            #expect(try help(command).contains("--cache-dir"), "\(command)")
        }
        let info = try magpie(["info", "--cache-dir", "/tmp", "x.png"])
        #expect(info.status == 2)
        #expect(info.stderr.contains("--cache-dir"))
    }

    @Test func sizeLimitIsOfferedOnlyWhereItDoesSomething() throws {
        for command in [["fetch"], ["prefetch"], ["cache", "clean"]] {
            #expect(try help(command).contains("--size-limit"), "\(command)")
        }
        for command in [["cache", "stats"], ["cache", "clear"], ["cache", "verify"], ["show"], ["info"]] {
            #expect(try !help(command).contains("--size-limit"), "\(command)")
        }
        #expect(try magpie(["cache", "stats", "--size-limit", "1MB"]).status == 2)
    }

    @Test func timeoutStatesTheValidRangeAndANegativeValueGetsTheSameMessageAsWithEquals() throws {
        let message = "--timeout must be more than 0 and at most 86400 seconds"
        for command in ["fetch", "show", "prefetch"] {
            let zero = try magpie([command, "--timeout", "0", "x"])
            #expect(zero.status == 2, "\(command)")
            #expect(zero.stderr.contains(message), "\(command): \(zero.stderr)")
            let spaced = try magpie([command, "--timeout", "-1", "x"])
            let equals = try magpie([command, "--timeout=-1", "x"])
            #expect(spaced.status == 2 && equals.status == 2, "\(command)")
            #expect(spaced.stderr.contains(message), "\(command): \(spaced.stderr)")
            #expect(spaced.stderr == equals.stderr, "\(command)")
        }
        #expect(try magpie(["fetch", "--timeout", "86401", "x"]).stderr.contains(message))
    }

    @Test func sizeLimitTakesUnitsAndRefusesNegativesAndGarbageAsUsageErrors() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-options-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try magpie(["sample", folder.path]).status == 0)
        let photo = folder.appendingPathComponent("photo.jpg").path
        for limit in ["500MB", "2GiB", "1.5GB", "1048576", "0"] {
            let cache = folder.appendingPathComponent("cache").path
            let run = try magpie(["fetch", "--cache-dir", cache, "--size-limit", limit, photo])
            #expect(run.status == 0, "\(limit): \(run.stderr)")
        }
        for limit in ["-1", "abc", "5XB", "1e3"] {
            for command in [["fetch"], ["prefetch"], ["cache", "clean"]] {
                let run = try magpie(command + ["--size-limit", limit] + (command == ["cache", "clean"] ? [] : [photo]))
                #expect(run.status == 2, "\(command) \(limit)")
                #expect(run.stderr.contains("--size-limit"), "\(command) \(limit): \(run.stderr)")
            }
        }
    }
}
