import ArgumentParser
import Foundation
import Magpie

/// `magpie cache stats|clean|clear|verify`: inspect and maintain a disk cache folder.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache", abstract: "Inspect and maintain a Magpie disk cache.",
        subcommands: [Stats.self, Clean.self, Clear.self, Verify.self])

    /// Options shared by the cache subcommands.
    struct Location: ParsableArguments {
        @OptionGroup var global: GlobalOptions

        @Option(help: "The cache's name (its folder below --cache-dir).")
        var name = "default"

        @Option(name: .customLong("size-limit"), help: "Size limit in bytes for clean (0: none).")
        var sizeLimit = 0

        @Flag(help: "Print one JSON object.")
        var json = false

        func open() throws -> DiskStorage {
            global.bootstrapLogging()
            return try DiskStorage(config: .init(name: name, directory: global.cacheRoot, sizeLimit: sizeLimit))
        }

        func report(_ storage: DiskStorage, extra: [String: Any?] = [:]) throws {
            let record: [String: Any?] = [
                "path": storage.directoryURL.path, "entries": try storage.count(), "bytes": try storage.totalSize(),
                "expired": try storage.expiredCount(),
            ].merging(extra) { $1 }
            if json {
                print(jsonLine(record))
            } else {
                let details = record.keys.sorted().filter { $0 != "path" }.map { "\($0) \(record[$0]!.map { "\($0)" } ?? "-")" }
                print("\(storage.directoryURL.path): " + details.joined(separator: ", "))
            }
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes and expired entries of a cache.")
        @OptionGroup var location: Location
        func run() throws { try runReporting(location) { try location.report($0) } }
    }

    struct Clean: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove expired entries, then enforce --size-limit.")
        @OptionGroup var location: Location
        func run() throws {
            try runReporting(location) { storage in
                let expired = try storage.removeExpired()
                let evicted = try storage.enforceSizeLimit()
                try location.report(storage, extra: ["removedExpired": expired.count, "evicted": evicted.count])
            }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")
        @OptionGroup var location: Location
        func run() throws {
            try runReporting(location) { storage in
                try storage.removeAll()
                try location.report(storage)
            }
        }
    }
}

/// Opens the cache and runs `body`, turning failures into one line and exit status 1.
private func runReporting(_ location: CacheCommand.Location, _ body: (DiskStorage) throws -> Void) throws {
    do {
        try body(try location.open())
    } catch {
        if location.json { print(jsonLine(["error": "\(error)"])) } else { printError("cache: \(error)") }
        throw ExitCode(1)
    }
}
