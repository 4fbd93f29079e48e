import Foundation
import Testing
@testable import MagpieCore
#if canImport(Glibc)
import Glibc
#endif

/// The disk cache's `http` column: every RFC 9111 field comes back as stored, a refresh replaces it, an index from
/// before the column is migrated without losing entries, and the spool folder is set up and cleaned at open.
@Suite struct DiskStorageHTTPRecordTests {
    static let key = "https://example.com/photo.jpg"
    static let payload = Data((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })

    static func storage(_ folder: TemporaryFolder, clock: TestClock = TestClock(), readOnly: [URL] = []) throws -> DiskStorage {
        // No sweeps: nothing runs against the index behind the test's back.
        try DiskStorage(config: .init(
            name: "http", directory: folder.url, sizeLimit: 0, sweepInterval: 0, readOnlyDirectories: readOnly,
            clock: clock.clock))
    }

    /// Validators carrying every field, times with fractions of a second.
    static func full(etag: String = "\"v1\"", cacheControl: String = "max-age=60, stale-if-error=\"300\"") -> HTTPValidators {
        HTTPValidators(
            etag: etag, lastModified: "Thu, 14 Jan 2027 08:00:00 GMT", maxAge: 60, contentType: "image/jpeg",
            cacheControl: cacheControl, expires: "Fri, 15 Jan 2027 08:01:00 GMT", date: "Fri, 15 Jan 2027 08:00:00 GMT",
            age: "100, 5", vary: "Accept, Accept-Language",
            varyingRequestHeaders: [HTTPHeaderField(name: "accept", value: "image/avif, image/webp, */*")],
            requestTime: Date(timeIntervalSince1970: 1_800_000_000.125),
            responseTime: Date(timeIntervalSince1970: 1_800_000_001.375))
    }

    static func columns(_ disk: DiskStorage) throws -> [String] {
        try disk.withIndex { db in
            var names: [String] = []
            try db.run("SELECT name FROM pragma_table_info('entries')") { if let name = $0.text(0) { names.append(name) } }
            return names
        }
    }

    @Test func everyRFC9111FieldComesBackFromMetadataAndEntry() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try Self.storage(folder)
        try disk.store(Self.payload, forKey: Self.key, validators: Self.full())
        #expect(try disk.metadata(forKey: Self.key)?.validators == Self.full())
        let entry = try #require(try disk.entry(forKey: Self.key))
        #expect(entry.data == Self.payload)
        #expect(entry.metadata.validators == Self.full())
    }

    @Test func theRecordSurvivesReopeningTheFolder() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        try Self.storage(folder).store(Self.payload, forKey: Self.key, validators: Self.full())
        let reopened = try Self.storage(folder)
        #expect(try reopened.metadata(forKey: Self.key)?.validators == Self.full())
    }

    @Test func anEntryWithoutHTTPFactsStoresNoRecord() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try Self.storage(folder)
        let plain = HTTPValidators(etag: "\"x\"", contentType: "image/png")
        try disk.store(Self.payload, forKey: Self.key, validators: plain)
        #expect(try disk.metadata(forKey: Self.key)?.validators == plain)
        var record: String?? = .none
        try disk.withIndex { db in
            _ = try db.run("SELECT http FROM entries") { record = .some($0.text(0)) }
        }
        #expect(record == .some(nil))
    }

    @Test func refreshReplacesTheRecord() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try Self.storage(folder)
        try disk.store(Self.payload, forKey: Self.key, validators: Self.full())
        let revalidated = Self.full(etag: "\"v2\"", cacheControl: "no-cache")
        #expect(try disk.refresh(forKey: Self.key, validators: revalidated))
        #expect(try disk.metadata(forKey: Self.key)?.validators == revalidated)
        // A refresh with no HTTP facts leaves none behind (the old ones are not kept).
        let bare = HTTPValidators(etag: "\"v3\"")
        #expect(try disk.refresh(forKey: Self.key, validators: bare))
        let metadata = try #require(try disk.metadata(forKey: Self.key))
        #expect(metadata.validators == bare)
        #expect(try disk.value(forKey: Self.key) == Self.payload)
    }

    @Test func refreshOfAMissingKeyWritesNothing() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try Self.storage(folder)
        #expect(try !disk.refresh(forKey: Self.key, validators: Self.full()))
        #expect(try disk.metadata(forKey: Self.key) == nil)
    }

    @Test func anIndexFromBeforeTheHTTPColumnIsMigratedWithoutLosingEntries() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let old = HTTPValidators(etag: "\"old\"", lastModified: "Thu, 14 Jan 2027 08:00:00 GMT", maxAge: 60, contentType: "image/jpeg")
        do {
            let disk = try Self.storage(folder)
            try disk.store(Self.payload, forKey: Self.key, validators: HTTPValidators(
                etag: "\"old\"", lastModified: old.lastModified, maxAge: 60, contentType: "image/jpeg", cacheControl: "max-age=60"))
            // What an older version's index looks like.
            try disk.withIndex { try $0.execute("ALTER TABLE entries DROP COLUMN http") }
            #expect(try !Self.columns(disk).contains("http"))
        }
        let migrated = try Self.storage(folder)
        #expect(try Self.columns(migrated).contains("http"))
        let entry = try #require(try migrated.entry(forKey: Self.key))
        #expect(entry.data == Self.payload)
        #expect(entry.metadata.validators == old)
        #expect(entry.metadata.validators.cacheControl == nil && entry.metadata.validators.responseTime == nil)
        try migrated.store(Self.payload, forKey: "https://example.com/new.jpg", validators: Self.full())
        #expect(try migrated.metadata(forKey: "https://example.com/new.jpg")?.validators == Self.full())
    }

    @Test func aReadOnlyFolderFromBeforeTheHTTPColumnIsStillRead() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let shippedURL: URL
        do {
            let shipped = try DiskStorage(config: .init(
                name: "shipped", directory: folder.url, sizeLimit: 0, sweepInterval: 0, clock: TestClock().clock))
            try shipped.store(Self.payload, forKey: Self.key, validators: HTTPValidators(etag: "\"s\""))
            try shipped.withIndex { try $0.execute("ALTER TABLE entries DROP COLUMN http") }
            shippedURL = shipped.directoryURL
        }
        let disk = try Self.storage(folder, readOnly: [shippedURL])
        let entry = try #require(try disk.entry(forKey: Self.key))
        #expect(entry.data == Self.payload)
        #expect(entry.metadata.validators == HTTPValidators(etag: "\"s\""))
        // Read-only: never migrated.
        let reader = try SQLiteDatabase(path: DiskStorage.indexPath(root: shippedURL.path), readOnly: true)
        var hasHTTP = false
        try reader.run("SELECT name FROM pragma_table_info('entries')") { if $0.text(0) == "http" { hasHTTP = true } }
        #expect(!hasHTTP)
    }

    @Test func theSpoolDirectoryIsInTheCacheFolderAndExistsAfterOpening() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let disk = try Self.storage(folder)
        let spool = disk.spoolDirectory
        #expect(spool.standardizedFileURL == disk.directoryURL.appendingPathComponent("spool").standardizedFileURL)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: spool.path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test func openingRemovesSpoolFilesOfDeadProcessesAndStaleResumableOnes() throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        // The real time: a kept body's age is its file's modification time measured by the storage's clock.
        let clock = TestClock(start: Date())
        let spool = try Self.storage(folder, clock: clock).spoolDirectory
        let deadWriter = spool.appendingPathComponent("2147483000-123.part")
        let liveWriter = spool.appendingPathComponent("\(getpid())-456.part")
        let resumable = spool.appendingPathComponent("resume-abc.part")
        let staleResumable = spool.appendingPathComponent("resume-old.part")
        for file in [deadWriter, liveWriter, resumable, staleResumable] {
            try Data("partial".utf8).write(to: file)
        }
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-2 * 86_400)], ofItemAtPath: staleResumable.path)
        #expect(kill(2_147_483_000, 0) != 0 && errno == ESRCH, "the test needs a pid no process has")
        _ = try Self.storage(folder, clock: clock)
        let manager = FileManager.default
        #expect(!manager.fileExists(atPath: deadWriter.path))
        #expect(manager.fileExists(atPath: liveWriter.path))
        #expect(manager.fileExists(atPath: resumable.path))
        #expect(!manager.fileExists(atPath: staleResumable.path))
    }
}
