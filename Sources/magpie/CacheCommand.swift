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

        @OptionGroup var cacheFolder: CacheFolderOptions

        @Option(help: "The cache's name (its folder below --cache-dir).")
        var name = "default"

        @Flag(help: "Print one JSON object.")
        var json = false

        /// Opens the existing cache `name` (with `sizeLimit` bytes as its limit, 0 for none). A missing one is an
        /// error, not an empty cache: opening would create it, and a mistyped name or folder would look empty.
        func open(sizeLimit: Int = 0) throws -> DiskStorage {
            global.bootstrapLogging()
            guard cacheFolder.cacheExists(named: name) else {
                throw CLIError("no cache named \(name) in \(cacheFolder.cacheRoot.path)")
            }
            // No use-driven sweep: these commands report and change the cache only as asked.
            return try DiskStorage(config: .init(
                name: name, directory: cacheFolder.cacheRoot, sizeLimit: sizeLimit, sweepInterval: 0))
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
        static let configuration = CommandConfiguration(
            abstract: "Remove expired entries, then enforce --size-limit.",
            discussion: """
                Over --size-limit, clean evicts the least recently used entries down to half of --size-limit \
                (as the cache does when a write takes it over its limit), so the next writes have room.
                """)
        @OptionGroup var location: Location

        @Option(name: .customLong("size-limit"), parsing: .unconditional, help: ArgumentHelp(
            "Evicts the least recently used entries down to half of --size-limit when over it: e.g. 500MB, 2GiB, "
                + "1048576 (bytes); 0 for none.",
            valueName: "size"))
        var sizeLimit = ByteCount(bytes: 0)

        func run() throws {
            try runReporting(location, sizeLimit: sizeLimit.bytes) { storage in
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
private func runReporting(_ location: CacheCommand.Location, sizeLimit: Int = 0, _ body: (DiskStorage) throws -> Void) throws {
    do {
        try body(try location.open(sizeLimit: sizeLimit))
    } catch {
        if location.json { print(jsonLine(["error": "\(error)"])) } else { printError("cache: \(error)") }
        throw ExitCode(1)
    }
}
