import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct DiskStorageVerificationTests {
    func storage(_ folder: TemporaryFolder) throws -> DiskStorage {
        try DiskStorage(config: .init(name: "verify", directory: folder.url))
    }

    /// Three entries with distinct payloads, keys `k0`...`k2`.
    func filled(_ folder: TemporaryFolder) throws -> DiskStorage {
        let disk = try storage(folder)
        for seed in 0..<3 {
            try disk.store(Data((0..<500).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ seed) }), forKey: "k\(seed)")
        }
        return disk
    }

    @Test func anIntactCacheVerifiesAsAllIntact() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try filled(folder)
        let report = try disk.verify()
        #expect(report.checked == 3 && report.intact == 3)
        #expect(report.damaged.isEmpty && report.orphans.isEmpty && report.temporaryFiles == 0 && report.isClean)
        #expect(!report.repaired)
    }

    @Test func aFlippedByteMarksThatKeyDamagedAndRepairRemovesIt() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try filled(folder)
        let file = disk.fileURL(forKey: "k1")
        var bytes = try Data(contentsOf: file)
        bytes[100] ^= 0xFF
        try bytes.write(to: file)

        let report = try disk.verify()
        #expect(report.checked == 3 && report.intact == 2)
        let damaged = try #require(report.damaged.first)
        #expect(report.damaged.count == 1 && damaged.key == "k1" && damaged.fileName == file.lastPathComponent)
        guard case .checksumMismatch(let expected, let actual) = damaged.reason else {
            Issue.record("expected a checksum mismatch, got \(damaged.reason)")
            return
        }
        #expect(expected != actual)
        #expect(FileManager.default.fileExists(atPath: file.path), "a plain verify changes nothing")

        let repaired = try disk.verify(repair: true)
        #expect(repaired.repaired && repaired.damaged.map(\.key) == ["k1"])
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try disk.count() == 2 && !disk.isCached(forKey: "k1"))
        let again = try disk.verify()
        #expect(again.isClean && again.checked == 2 && again.intact == 2)
    }

    @Test func aShortenedFileIsASizeMismatch() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try filled(folder)
        let file = disk.fileURL(forKey: "k2")
        try Data(try Data(contentsOf: file).prefix(120)).write(to: file)
        let report = try disk.verify()
        #expect(report.damaged.map(\.key) == ["k2"])
        #expect(report.damaged.first?.reason == .sizeMismatch(expected: 500, actual: 120))
    }

    @Test func aDeletedFileIsMissing() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try filled(folder)
        try FileManager.default.removeItem(at: disk.fileURL(forKey: "k0"))
        let report = try disk.verify()
        #expect(report.checked == 3 && report.intact == 2)
        #expect(report.damaged == [.init(key: "k0", fileName: disk.fileName(forKey: "k0"), reason: .missingFile)])
        _ = try disk.verify(repair: true)
        #expect(try disk.count() == 2)
        #expect(try disk.verify().isClean)
    }

    @Test func unknownFilesInTheEntryFolderAreOrphansAndRepairRemovesThem() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try filled(folder)
        let entries = disk.directoryURL.appendingPathComponent("entries")
        // One named like an entry that has no row, one in a bucket its name does not belong to.
        let unindexed = entries.appendingPathComponent("ab/ab" + String(repeating: "0", count: 62))
        let name = disk.fileName(forKey: "k0")
        let bucket = name.hasPrefix("cd") ? "ce" : "cd"
        let misplaced = entries.appendingPathComponent(bucket + "/" + name)
        try Data("stray".utf8).write(to: unindexed)
        try Data("stray".utf8).write(to: misplaced)

        let report = try disk.verify()
        #expect(report.intact == 3 && report.damaged.isEmpty)
        #expect(Set(report.orphans) == ["entries/ab/" + unindexed.lastPathComponent, "entries/\(bucket)/" + name])
        #expect(!report.isClean)

        _ = try disk.verify(repair: true)
        #expect(!FileManager.default.fileExists(atPath: unindexed.path) && !FileManager.default.fileExists(atPath: misplaced.path))
        #expect(try disk.value(forKey: "k0") != nil, "the real entry with the misplaced file's name is untouched")
        #expect(try disk.verify().isClean)
    }

    @Test func temporaryFilesOfRunningWritersAreCountedAndLeftAlone() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try filled(folder)
        // Named after this (running) process, as a write in progress would be.
        let temporary = disk.directoryURL.appendingPathComponent("tmp/\(getpid())-12345")
        try Data("half".utf8).write(to: temporary)
        let report = try disk.verify(repair: true)
        #expect(report.temporaryFiles == 1 && report.isClean)
        #expect(FileManager.default.fileExists(atPath: temporary.path))
    }

    @Test func aPayloadCheckThatThrowsMarksTheEntryRejected() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try filled(folder)
        struct NotWanted: Error, CustomStringConvertible { var description: String { "not wanted" } }
        var seen: [String] = []
        let report = try disk.verify { entry, data in
            seen.append(entry.key)
            #expect(data.count == 500)
            if entry.key == "k2" { throw NotWanted() }
        }
        #expect(Set(seen) == ["k0", "k1", "k2"])
        #expect(report.intact == 2 && report.damaged == [.init(key: "k2", fileName: disk.fileName(forKey: "k2"), reason: .rejected(message: "not wanted"))])
        _ = try disk.verify(repair: true) { entry, _ in if entry.key == "k2" { throw NotWanted() } }
        #expect(try disk.count() == 2 && disk.verify().isClean)
    }

    @Test func theWalkCoversEveryPageOfALargeIndex() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try storage(folder)
        let count = DiskStorage.verificationPageSize * 2 + 7
        for index in 0..<count { try disk.store(Data("entry \(index)".utf8), forKey: "key-\(index)") }
        let last = "key-\(count - 1)"
        try Data("changed".utf8).write(to: disk.fileURL(forKey: last))
        let report = try disk.verify()
        #expect(report.checked == count && report.intact == count - 1 && report.damaged.map(\.key) == [last])
    }
}
