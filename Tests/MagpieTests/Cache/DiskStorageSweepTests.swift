import Foundation
import Testing

@testable import MagpieCore

/// The disk cache's default size limit and its use-driven sweeps.
@Suite("DiskStorage: default limit and sweeps")
struct DiskStorageSweepTests {
    func open(_ folder: TemporaryFolder, clock: TestClock, interval: TimeInterval = 100, sizeLimit: Int? = nil) throws -> DiskStorage {
        try DiskStorage(config: .init(
            name: "sweep", directory: folder.url, sizeLimit: sizeLimit, expiration: .seconds(50), sweepInterval: interval,
            clock: clock.clock))
    }

    @Test func theDefaultSizeLimitIsATenthOfTheFileSystemAtMostOneGiB() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        var info = statvfs()
        #expect(statvfs(folder.url.path, &info) == 0)
        let capacity = Int(UInt64(info.f_blocks) * UInt64(info.f_frsize))
        let expected = min(1 << 30, max(16 << 20, capacity / 10))
        #expect(DiskStorage.Config.defaultSizeLimit(forFolder: folder.url) == expected)
        // A folder that does not exist yet is measured on its nearest existing ancestor.
        #expect(DiskStorage.Config.defaultSizeLimit(forFolder: folder.url.appendingPathComponent("a/b/c")) == expected)
        #expect(DiskStorage.Config(name: "x", directory: folder.url).sizeLimit == expected)
        #expect(DiskStorage.Config(name: "x", directory: folder.url, sizeLimit: 0).sizeLimit == 0)
    }

    @Test func aReadOrWriteAfterTheIntervalSweepsExpiredEntriesInTheBackground() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try open(folder, clock: clock)
        try disk.store(Data(repeating: 1, count: 10), forKey: "old")
        clock.advance(60)  // "old" expired; no sweep is due yet
        try disk.store(Data(repeating: 2, count: 10), forKey: "new")
        try await disk.flush()
        #expect(try disk.count() == 2, "expired but not swept before the interval")
        clock.advance(45)  // 105 s after opening: the next use sweeps
        _ = try disk.value(forKey: "new")
        try await disk.flush()
        #expect(try disk.count() == 1)
        #expect(try disk.lastSweepDate() == clock.clock.now())
        #expect(try disk.value(forKey: "new") != nil)
    }

    @Test func openingSweepsWhenTheLastSweepIsOlderThanTheInterval() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        do {
            let disk = try open(folder, clock: clock)
            try disk.store(Data(repeating: 1, count: 10), forKey: "a")
            try disk.store(Data(repeating: 1, count: 10), forKey: "b", expiration: .days(1))
        }
        clock.advance(80)  // "a" expired, the interval not over: opening does not sweep
        let early = try open(folder, clock: clock)
        try await early.flush()
        #expect(try early.count() == 2)
        clock.advance(30)
        let late = try open(folder, clock: clock)
        try await late.flush()
        #expect(try late.count() == 1)
        #expect(try late.value(forKey: "b") != nil)
    }

    @Test func aZeroIntervalNeverSweeps() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try open(folder, clock: clock, interval: 0)
        try disk.store(Data(repeating: 1, count: 10), forKey: "a")
        clock.advance(1_000_000)
        try disk.store(Data(repeating: 1, count: 10), forKey: "b")
        try await disk.flush()
        #expect(try disk.count() == 2)
        #expect(try disk.lastSweepDate() != nil, "a new cache records when it was made as its last sweep")
    }

    @Test func loweringTheSizeLimitOfALiveStorageEvictsDownToHalfOfIt() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try open(folder, clock: TestClock(), sizeLimit: 0)
        for index in 0..<10 { try disk.store(Data(repeating: UInt8(index), count: 100), forKey: "k\(index)") }
        disk.config.sizeLimit = 600
        try await disk.flush()
        #expect(try disk.totalSize() <= 300)
        // The fixed parts of the configuration do not change with a new value.
        var other = DiskStorage.Config(name: "elsewhere", directory: folder.url.appendingPathComponent("x"), sizeLimit: 900)
        other.expiration = .seconds(5)
        disk.config = other
        #expect(disk.config.name == "sweep" && disk.config.sizeLimit == 900)
        #expect(disk.directoryURL.lastPathComponent == "sweep")
    }
}
