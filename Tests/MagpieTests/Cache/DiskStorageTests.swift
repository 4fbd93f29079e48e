import Foundation
import Synchronization
import Testing
@testable import Magpie
@testable import MagpieCore

/// A clock the tests move by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>
    /// A clock at `start` (default a fixed date in 2027; HTTP tests start at the real time, as the origin's `Date` does).
    init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }
    var clock: CacheClock { CacheClock { [self] in current.withLock { $0 } } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A fresh folder under the system temporary directory, removed by `cleanUp()`.
struct TemporaryFolder {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-test-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    func cleanUp() { try? FileManager.default.removeItem(at: url) }
}

struct DiskStorageTests {
    func storage(_ folder: TemporaryFolder, name: String = "test", sizeLimit: Int = 0, clock: TestClock = TestClock(),
                 expiration: StorageExpiration = .days(7), extending: ExpirationExtending = .cacheTime,
                 keepsExtension: Bool = false, readOnly: [URL] = []) throws -> DiskStorage {
        try DiskStorage(config: .init(
            name: name, directory: folder.url, sizeLimit: sizeLimit, expiration: expiration,
            accessExtending: extending, keepsPathExtension: keepsExtension, readOnlyDirectories: readOnly,
            clock: clock.clock))
    }

    func payload(_ seed: Int, size: Int = 1000) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7) })
    }

    @Test func storedBytesComeBackWithTheirMetadata() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try storage(folder)
        let validators = DiskStorage.Validators(etag: "\"abc\"", lastModified: "Sun, 22 Nov 2026 10:00:00 GMT", maxAge: 60, contentType: "image/png")
        try disk.store(payload(1), forKey: "https://example.com/a.png", validators: validators)
        let entry = try #require(try disk.entry(forKey: "https://example.com/a.png"))
        #expect(entry.data == payload(1))
        #expect(entry.metadata.validators == validators)
        #expect(entry.metadata.size == 1000 && entry.metadata.key == "https://example.com/a.png")
        #expect(try disk.value(forKey: "https://example.com/b.png") == nil)
        #expect(try disk.totalSize() == 1000 && disk.count() == 1)
    }

    @Test func fileNamesAreSHA256OfTheKeyWithOptionalExtension() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let plain = try storage(folder)
        // SHA-256("abc") is well known.
        #expect(plain.fileName(forKey: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let browsable = try storage(folder, name: "ext", keepsExtension: true)
        #expect(browsable.fileName(forKey: "https://x.org/p/cat.JPG?size=2").hasSuffix(".jpg"))
        #expect(!browsable.fileName(forKey: "https://x.org/p/cat").contains("."))
        try browsable.store(payload(2), forKey: "https://x.org/p/cat.JPG?size=2")
        #expect(FileManager.default.fileExists(atPath: browsable.fileURL(forKey: "https://x.org/p/cat.JPG?size=2").path))
    }

    @Test func entriesExpireAndReadsExtendThemPerConfiguration() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try storage(folder, clock: clock, expiration: .seconds(100))
        try disk.store(payload(1), forKey: "k")
        clock.advance(90)
        #expect(try disk.value(forKey: "k") != nil)  // .cacheTime: now valid until +190
        clock.advance(90)
        #expect(try disk.value(forKey: "k", extendingExpiration: ExpirationExtending.none) != nil)
        clock.advance(20)  // 200 > 190: expired
        #expect(try disk.value(forKey: "k") == nil)
        #expect(try disk.count() == 0, "an expired entry is removed when read")

        try disk.store(payload(2), forKey: "short", expiration: .seconds(5))
        try disk.store(payload(3), forKey: "never", expiration: .never)
        try disk.store(payload(4), forKey: "gone", expiration: .expired)
        #expect(try disk.count() == 2)
        clock.advance(10)
        #expect(!disk.isCached(forKey: "short") && disk.isCached(forKey: "never"))
        #expect(try disk.expiredCount() == 1)
        _ = try disk.value(forKey: "never", extendingExpiration: .expirationTime(.seconds(1)))
        clock.advance(2)
        #expect(try disk.value(forKey: "never") == nil)
    }

    @Test func containsDataIsAnIndexLookupRunOnTheIOExecutor() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let executor = BoundedExecutor(name: "contains-test", width: 1)
        let disk = try DiskStorage(config: .init(
            name: "contains", directory: folder.url, expiration: .seconds(100), sweepInterval: 0, clock: clock.clock, ioExecutor: executor))
        try disk.store(payload(1), forKey: "k")
        #expect(executor.peakRunningCount == 0)
        #expect(await disk.containsData(forKey: "k"))
        #expect(executor.peakRunningCount == 1, "the SQLite lookup ran as a job of the storage's I/O executor")
        #expect(!(await disk.containsData(forKey: "other")))
        clock.advance(101)
        #expect(!(await disk.containsData(forKey: "k")), "an expired entry is not contained")
    }

    @Test func metadataOfAKeyWithNoPayloadFileAsksNoIndexYetSeesOtherOpenersWrites() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try storage(folder)
        let other = try storage(folder)  // another process's opening of the same folder
        let before = disk.indexTripCount
        #expect(try disk.metadata(forKey: "never-stored") == nil)
        #expect(!disk.isCached(forKey: "never-stored"))
        #expect(disk.indexTripCount == before, "a key without a payload file is a miss without a lock or a query")
        try other.store(payload(1), forKey: "theirs")
        #expect(try disk.metadata(forKey: "theirs")?.size == 1000, "a write through another opening is seen at once")
        #expect(disk.indexTripCount == before + 1)
        try other.remove(forKey: "theirs")
        #expect(try disk.metadata(forKey: "theirs") == nil)
    }

    @Test func removeExpiredReturnsFileNamesAndPublishesThem() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try storage(folder, clock: clock)
        let events = disk.events()
        try disk.store(payload(1), forKey: "old", expiration: .seconds(10))
        try disk.store(payload(2), forKey: "new", expiration: .seconds(1000))
        clock.advance(20)
        let removed = try disk.removeExpired()
        #expect(removed == [disk.fileName(forKey: "old")])
        #expect(!FileManager.default.fileExists(atPath: disk.fileURL(forKey: "old").path))
        var seen: [DiskStorage.Event] = []
        for await event in events {
            seen.append(event)
            if case .cleaned = event { break }
        }
        #expect(seen.last == .cleaned(fileNames: removed))
    }

    @Test func writesOverTheLimitEvictLeastRecentlyUsedDownToHalf() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try storage(folder, sizeLimit: 10_000, clock: clock)
        for i in 0..<10 {
            try disk.store(payload(i), forKey: "k\(i)")
            clock.advance(1)
        }
        _ = try disk.value(forKey: "k0")  // k0 becomes the most recently used
        clock.advance(1)
        try disk.store(payload(99), forKey: "k10")  // 11,000 > 10,000: evict to ≤ 5,000
        #expect(try disk.totalSize() <= 5_000)
        #expect(try disk.value(forKey: "k10") != nil, "the entry just written is kept")
        #expect(try disk.value(forKey: "k0") != nil, "recently read entries survive")
        #expect(try disk.value(forKey: "k1") == nil, "the least recently used go first")
        #expect(throws: MagpieError.self) { try disk.store(payload(1, size: 20_000), forKey: "huge") }
    }

    @Test func anEvictionLargerThanOneBatchStillReachesHalfTheLimitInUseOrder() throws {
        // 300 entries of 100 bytes at a 30,000-byte limit: the next write evicts 150 and more, over several batches.
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try storage(folder, sizeLimit: 30_000, clock: clock)
        for i in 0..<300 {
            try disk.store(payload(i, size: 100), forKey: "k\(i)")
            clock.advance(1)
        }
        try disk.store(payload(300, size: 100), forKey: "newest")
        #expect(try disk.totalSize() <= 15_000)
        #expect(try disk.totalSize() > 14_000, "eviction stops once under half, not a batch later")
        #expect(try disk.value(forKey: "newest") != nil)
        #expect(try disk.value(forKey: "k299") != nil, "the most recently used stay")
        #expect(try disk.value(forKey: "k150") == nil && disk.value(forKey: "k0") == nil, "the least recently used go")
    }

    @Test func expiredEntriesAreEvictedBeforeFreshOnes() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try storage(folder, sizeLimit: 4_000, clock: clock)
        try disk.store(payload(1), forKey: "fresh-but-old-access", expiration: .days(1))
        clock.advance(5)
        try disk.store(payload(2), forKey: "expiring", expiration: .seconds(10))
        try disk.store(payload(3), forKey: "fresh", expiration: .days(1))
        clock.advance(20)  // "expiring" is now expired though more recently used than the first
        try disk.store(payload(4), forKey: "trigger", expiration: .days(1))
        try disk.store(payload(5), forKey: "trigger2", expiration: .days(1))
        #expect(try disk.metadata(forKey: "expiring") == nil)
    }

    @Test func damagedPayloadIsAMissAndIsRemoved() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try storage(folder)
        try disk.store(payload(1), forKey: "k")
        var bytes = try Data(contentsOf: disk.fileURL(forKey: "k"))
        bytes[10] ^= 0xFF
        try bytes.write(to: disk.fileURL(forKey: "k"))
        #expect(try disk.value(forKey: "k") == nil)
        #expect(try disk.metadata(forKey: "k") == nil)
        #expect(!FileManager.default.fileExists(atPath: disk.fileURL(forKey: "k").path))

        try disk.store(payload(2), forKey: "cut")
        try Data(payload(2).prefix(500)).write(to: disk.fileURL(forKey: "cut"))
        #expect(try disk.value(forKey: "cut") == nil)
        try disk.store(payload(3), forKey: "deleted")
        try FileManager.default.removeItem(at: disk.fileURL(forKey: "deleted"))
        #expect(try disk.value(forKey: "deleted") == nil)
        #expect(try disk.count() == 0)
    }

    @Test func reopeningFindsEntriesAndRemovesAbandonedTemporaryFiles() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        do {
            let disk = try storage(folder)
            try disk.store(payload(7), forKey: "persisted")
        }
        let tmp = folder.url.appendingPathComponent("test/tmp")
        let abandoned = tmp.appendingPathComponent("999999999-123")  // no such pid
        let ours = tmp.appendingPathComponent("\(getpid())-456")     // a live writer's file
        try Data([1, 2, 3]).write(to: abandoned)
        try Data([4, 5, 6]).write(to: ours)
        let reopened = try storage(folder)
        #expect(try reopened.value(forKey: "persisted") == payload(7))
        #expect(!FileManager.default.fileExists(atPath: abandoned.path))
        #expect(FileManager.default.fileExists(atPath: ours.path))
    }

    @Test func refreshReplacesValidatorsAndRestartsExpiration() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try storage(folder, clock: clock, expiration: .seconds(100))
        try disk.store(payload(1), forKey: "k", validators: .init(etag: "\"v1\""))
        clock.advance(90)
        #expect(try disk.refresh(forKey: "k", validators: .init(etag: "\"v2\"", maxAge: 300), expiration: .seconds(300)))
        clock.advance(200)
        let entry = try #require(try disk.entry(forKey: "k"))
        #expect(entry.metadata.validators.etag == "\"v2\"" && entry.data == payload(1))
        #expect(try !disk.refresh(forKey: "missing", validators: .init()))
    }

    @Test func readOnlyDirectoriesAreSearchedOnAMissAndNeverWritten() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let seeded = try storage(folder, name: "seed")
        try seeded.store(payload(5), forKey: "bundled")
        let disk = try storage(folder, name: "main", readOnly: [seeded.directoryURL])
        #expect(try disk.value(forKey: "bundled") == payload(5))
        #expect(disk.isCached(forKey: "bundled"))
        try disk.store(payload(6), forKey: "own")
        #expect(try seeded.value(forKey: "own") == nil)
        #expect(try disk.count() == 1 && seeded.count() == 1)
    }

    @Test func removeAndRemoveAllDeleteFilesAndRows() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try storage(folder)
        for i in 0..<5 { try disk.store(payload(i), forKey: "k\(i)") }
        try disk.remove(forKey: "k0")
        #expect(try disk.value(forKey: "k0") == nil && disk.count() == 4)
        try disk.removeAll()
        #expect(try disk.count() == 0 && disk.totalSize() == 0)
        #expect(!FileManager.default.fileExists(atPath: disk.fileURL(forKey: "k3").path))
    }

    @Test func unwritableDirectoryIsATypedCacheError() throws {
        let error = #expect(throws: MagpieError.self) {
            try DiskStorage(config: .init(name: "x", directory: URL(fileURLWithPath: "/proc/magpie-cannot-write")))
        }
        if case .cacheFailed(.cannotCreateDirectory) = error {} else { Issue.record("unexpected \(String(describing: error))") }
    }

    @Test func concurrentWritersAndReadersKeepTotalsExact() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try storage(folder, sizeLimit: 60_000)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<40 {
                        let key = "k\((worker * 40 + i) % 90)"
                        try disk.store(self.payload(i, size: 500 + i * 10), forKey: key)
                        if let data = try disk.value(forKey: key) { #expect(!data.isEmpty) }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try disk.totalSize() <= 60_000)
        let files = try FileManager.default.subpathsOfDirectory(atPath: disk.directoryURL.appendingPathComponent("entries").path)
            .filter { $0.count > 3 }
        #expect(files.count == (try disk.count()), "every indexed entry has a file and no file is orphaned")
    }

    @Test func batchedAccessTimesReachTheIndexForOtherOpeners() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try storage(folder, clock: clock, expiration: .seconds(100))
        try disk.store(payload(1), forKey: "k")
        clock.advance(80)
        _ = try disk.value(forKey: "k")  // extends to +180, pending in memory
        let other = try storage(folder, clock: clock)
        #expect(try other.metadata(forKey: "k")?.expiration == Date(timeIntervalSince1970: 1_800_000_100))
        try disk.flushAccessTimes()
        #expect(try other.metadata(forKey: "k")?.expiration == Date(timeIntervalSince1970: 1_800_000_180))
        #expect(try other.metadata(forKey: "k")?.lastAccess == Date(timeIntervalSince1970: 1_800_000_080))
    }

    // Regression tests for the cache review.

    @Test func aReadBeforeRefreshOrRestoreCannotUndoTheNewExpiry() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try storage(folder, clock: clock, expiration: .seconds(100))
        try disk.store(payload(1), forKey: "refreshed")
        try disk.store(payload(2), forKey: "restored")
        clock.advance(50)
        _ = try disk.value(forKey: "refreshed")  // pending: expires at +150
        _ = try disk.value(forKey: "restored")
        try disk.refresh(forKey: "refreshed", validators: .init(etag: "\"v2\""), expiration: .seconds(1000))
        try disk.store(payload(2), forKey: "restored", expiration: .never)
        try disk.flushAccessTimes()
        clock.advance(200)  // +250: past the stale +150
        #expect(try disk.value(forKey: "refreshed") != nil)
        #expect(try disk.value(forKey: "restored") != nil)
    }

    @Test func accessTimesReachTheIndexAfterReadsStop() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let clock = TestClock()
        let disk = try storage(folder, clock: clock, expiration: .seconds(100))
        try disk.store(payload(1), forKey: "k")
        clock.advance(80)
        _ = try disk.value(forKey: "k")  // extends to +180, then no more reads
        let other = try storage(folder, clock: clock)
        var seen: Date?
        for _ in 0..<30 {  // bounded: the flush is due after 1 s
            seen = try other.metadata(forKey: "k")?.expiration
            if seen == Date(timeIntervalSince1970: 1_800_000_180) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(seen == Date(timeIntervalSince1970: 1_800_000_180))
    }

    @Test func readOnlyDirectoryWithAnIndexServesOnlyIndexedFiles() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let seeded = try storage(folder, name: "seed")
        try seeded.store(payload(5), forKey: "indexed")
        // A payload file with no row, as a killed writer could leave behind.
        let orphanURL = seeded.fileURL(forKey: "orphan")
        try payload(6).write(to: orphanURL)
        let disk = try storage(folder, name: "main", readOnly: [seeded.directoryURL])
        #expect(try disk.value(forKey: "indexed") == payload(5))
        #expect(try disk.value(forKey: "orphan") == nil)
        #expect(!disk.isCached(forKey: "orphan"))
    }
}
