import Foundation
import Testing
@testable import MagpieCore

/// The index's write-ahead log goes into its database file by a job of the I/O executor on a connection of its own,
/// never inside the commit that fills it (where every request of the process waited for its disk syncs).
struct IndexCheckpointerTests {
    func storage(_ folder: TemporaryFolder) throws -> DiskStorage {
        try DiskStorage(config: .init(name: "index", directory: folder.url, sweepInterval: 0))
    }

    func fill(_ disk: DiskStorage, entries: Int) throws {
        for i in 0..<entries { try disk.store(Data("entry \(i)".utf8), forKey: "https://example.com/\(i).jpg") }
    }

    @Test func aLogPastAThousandPagesIsCheckpointedInTheBackground() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try storage(folder)
        try fill(disk, entries: 100)
        await disk.checkpointer.waitUntilIdle()
        #expect(disk.checkpointer.checkpointCount == 0, "a short log is left alone")
        // Each store commits a few pages (its row, the key index, the totals): 1,000 entries pass 1,000 pages.
        try fill(disk, entries: 1_000)
        try await disk.flush()
        #expect(disk.checkpointer.checkpointCount >= 1)
        let (log, copied) = try disk.checkpointer.checkpointNow()
        #expect(copied == log, "with no reader or writer, a passive checkpoint copies the whole log")
    }

    @Test func entriesWrittenAroundCheckpointsAllReadBackInAnotherOpening() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        do {
            let disk = try storage(folder)
            try fill(disk, entries: 1_500)
            try await disk.flush()
            #expect(disk.checkpointer.checkpointCount >= 1)
        }
        let reopened = try storage(folder)
        #expect(try reopened.count() == 1_500)
        #expect(try reopened.value(forKey: "https://example.com/1499.jpg") == Data("entry 1499".utf8))
        #expect(try reopened.value(forKey: "https://example.com/0.jpg") == Data("entry 0".utf8))
    }
}
