import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A crash-safe, multi-process disk cache of byte payloads: one file per entry, named by
/// the SHA-256 of its key, and an SQLite index (WAL mode) holding each entry's key, size,
/// times, expiry, HTTP validators and payload CRC-32.
///
/// - Writes go to `tmp/` first; the rename into place and the index row happen in one
///   `BEGIN IMMEDIATE` transaction, which also serialises writers of other processes.
///   A process killed at any instant leaves either the old entry, the new one, or a
///   file whose checksum does not match its row, which a read treats as a miss and removes.
/// - Reads look the key up in the index (never scanning the folder) and verify the checksum.
/// - The size limit is enforced in the writing transaction: least-recently-used entries,
///   expired ones first, are evicted down to half the limit.
public final class DiskStorage: Sendable {
    /// The configuration: set it on a live storage to change the limits, the expiry rules, the clock or the sweep
    /// interval (``Config/sizeLimit`` and the others declared `var`); the folder and file layout are fixed at open.
    /// A lower size limit is enforced by a sweep started at once.
    public var config: Config {
        get { settings.withLock { $0 } }
        set {
            let lowered = settings.withLock { current -> Bool in
                let lowered = newValue.sizeLimit > 0 && (current.sizeLimit == 0 || newValue.sizeLimit < current.sizeLimit)
                current.adoptAdjustableSettings(of: newValue)
                return lowered
            }
            if lowered { sweepInBackground() }
        }
    }
    /// `<directory>/<name>`: the cache's own folder.
    public let directoryURL: URL
    /// `spool` in the storage's folder, created at opening (leftovers of processes that are gone are removed then):
    /// Magpie's `ImageManager` has large downloads written there, on the entries' volume, rather than in the system's
    /// temporary folder.
    public var spoolDirectory: URL { directoryURL.appendingPathComponent("spool", isDirectory: true) }

    private let root: String
    private let index: Mutex<SQLiteDatabase>
    private let indexTrips = Atomic<Int>(0)
    private let accessTimeFlushes = Atomic<Int>(0)
    /// The payload bytes of all entries as the last write or eviction read them, -1 before the first: what the
    /// metrics' gauge shows after those events without another trip to the index.
    private let knownTotalBytes = Atomic<Int>(-1)
    private let readOnlySources: [ReadOnlySource]
    private let subscribers = Mutex<[Int: AsyncStream<Event>.Continuation]>([:])
    /// Access-time updates not yet written: a write transaction per hit would cost far more
    /// than the hit itself, so they are flushed in batches (and before any eviction).
    private let touches = Mutex(TouchLog())
    private let nextSubscriber = Mutex(0)
    private let settings: Mutex<Config>
    /// When the next use-driven sweep is due and whether one runs (see `DiskStorage+Sweeping`).
    let sweepSchedule = Mutex(SweepSchedule())
    /// Sweeps running in the background; ``flush()`` waits for them.
    let sweeps = PendingWork()
    /// Copies the index's write-ahead log into its database file off the request path.
    let checkpointer: IndexCheckpointer

    /// Opens (creating if needed) the cache folder and its index, and removes temporary
    /// files left by processes that no longer run.
    ///
    /// - Parameter config: The folder, limits and expiry rules. Other processes may open the same folder.
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` with
    ///   ``MagpieError/CacheFailureReason/cannotCreateDirectory(path:message:)`` when the folder cannot be created
    ///   or written, or ``MagpieError/CacheFailureReason/indexFailed(path:message:)`` when the index cannot be opened.
    public init(config: Config) throws {
        settings = Mutex(config)
        directoryURL = config.directory.appendingPathComponent(config.name, isDirectory: true)
        let root = directoryURL.path
        self.root = root
        try Self.files { () throws(FileSystemError) in
            try LocalFileSystem.createDirectory(root + "/tmp")
            for bucket in 0..<256 {
                try LocalFileSystem.createDirectory(root + "/entries/" + UInt8(bucket).hexDigits)
            }
        }
        Self.removeAbandonedTemporaryFiles(in: root + "/tmp")
        try Self.files { () throws(FileSystemError) in try LocalFileSystem.createDirectory(root + "/spool") }
        // File times are real ones: compared with the real clock, not the configured (possibly injected) one.
        Self.removeAbandonedSpoolFiles(in: root + "/spool", now: Date())
        let database = try SQLiteDatabase(path: Self.indexPath(root: root))
        try database.executeRetryingWhileBusy(config.syncsToDisk ? Self.schema + "PRAGMA synchronous=FULL;" : Self.schema)
        try Self.migrate(database)
        Self.reconcileAbandonedWrites(database, root: root)
        checkpointer = IndexCheckpointer(path: Self.indexPath(root: root), executor: config.ioExecutor)
        database.checkpointInBackground(checkpointer)
        index = Mutex(database)
        readOnlySources = config.readOnlyDirectories.map { ReadOnlySource(root: $0.path) }
        scheduleFirstSweep()
    }

    /// Brings an index made by an earlier version up to this schema: the `http` column. Two processes may race to add
    /// it; the loser's "duplicate column" is success.
    private static func migrate(_ database: SQLiteDatabase) throws {
        var hasHTTP = false
        try database.run("SELECT name FROM pragma_table_info('entries')") { row in
            if row.text(0) == "http" { hasHTTP = true }
        }
        guard !hasHTTP else { return }
        do {
            try database.executeRetryingWhileBusy(addHTTPColumn)
        } catch {
            guard "\(error)".contains("duplicate column") else { throw error }
        }
    }

    /// Runs `body` with the index, under its lock. Every use of the index goes through here and is counted
    /// (``indexTripCount``): how many a request costs is a budget the server's tests hold it to.
    func withIndex<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        indexTrips.add(1, ordering: .relaxed)
        return try index.withLock { try body($0) }
    }

    /// How many times the index was used (a query or a transaction under its lock) since this storage was opened.
    package var indexTripCount: Int { indexTrips.load(ordering: .relaxed) }

    /// How many of ``indexTripCount`` wrote buffered access times: batches shared by every read of the last second,
    /// not a cost of any one read.
    package var accessTimeFlushCount: Int { accessTimeFlushes.load(ordering: .relaxed) }

    /// The payload bytes of all entries as the last write or eviction found them; nil before the first.
    package var lastKnownTotalSize: Int? {
        let bytes = knownTotalBytes.load(ordering: .relaxed)
        return bytes < 0 ? nil : bytes
    }

    // MARK: Writing

    /// Stores `data` under `key`, replacing any earlier entry.
    ///
    /// Blocks on file I/O and on other processes' write transactions: call it off the cooperative pool
    /// (``ImageCache`` does).
    /// - Parameters:
    ///   - data: The payload, stored as is.
    ///   - key: Any string; it is hashed for the file name.
    ///   - expiration: Overrides `config.expiration` for this entry; an already expired value removes the entry
    ///     instead.
    ///   - validators: HTTP validators kept for revalidation.
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` with
    ///   ``MagpieError/CacheFailureReason/cannotWrite(path:message:diskFull:)`` (`diskFull` set for ENOSPC/EDQUOT),
    ///   ``MagpieError/CacheFailureReason/entryTooLarge(key:size:limit:)`` when `data` alone exceeds the size limit,
    ///   or ``MagpieError/CacheFailureReason/indexFailed(path:message:)``.
    public func store(_ data: Data, forKey key: String, expiration: StorageExpiration? = nil, validators: Validators = Validators()) throws {
        let config = self.config
        let now = config.clock.now()
        defer { sweepIfDue(now: now) }
        let lifetime = expiration ?? config.expiration
        let expires = lifetime.estimatedExpiration(since: now)
        guard !lifetime.isExpired, expires > now else {
            try remove(forKey: key)
            return
        }
        if config.sizeLimit > 0 && data.count > config.sizeLimit {
            throw MagpieError.cacheFailed(reason: .entryTooLarge(key: key, size: data.count, limit: config.sizeLimit))
        }
        let name = fileName(forKey: key)
        let temporary = root + "/tmp/" + LocalFileSystem.temporaryName()
        try Self.files { () throws(FileSystemError) in try LocalFileSystem.writeNewFile(temporary, data, sync: config.syncsToDisk) }
        let checksum = LocalFileSystem.checksum(data)
        let pid = Int64(getpid())
        let total: Int?
        do {
            total = try withIndex { db -> Int? in
                // Committed before the rename: if this process dies between the rename and
                // the commit below, the next opener finds the record and removes a payload
                // that has no matching row (otherwise an orphan file nobody can see).
                try db.run("INSERT INTO pending (name, pid) VALUES (?, ?)", [.text(name), .integer(pid)])
                do {
                    try db.transaction {
                        try Self.files { () throws(FileSystemError) in try LocalFileSystem.rename(temporary, path(of: name)) }
                        try db.run(Self.upsert, [
                            .text(name), .text(key), .integer(Int64(data.count)), .real(now.timeIntervalSince1970),
                            .real(now.timeIntervalSince1970), .real(expires.timeIntervalSince1970),
                            .optional(Self.renewableLifetime(lifetime)), .integer(Int64(checksum)),
                            .optional(validators.etag), .optional(validators.lastModified),
                            .optional(validators.maxAge), .optional(validators.contentType),
                            .optional(validators.cachingRecord),
                        ])
                        try db.run("DELETE FROM pending WHERE name = ? AND pid = ?", [.text(name), .integer(pid)])
                        // A read before this write must not put the old expiry back later.
                        touches.withLock { _ = $0.entries.removeValue(forKey: name) }
                    }
                } catch {
                    // Rolled back after the rename, perhaps: settle the file under the write lock.
                    try? db.transaction { Self.reconcilePending(db, root: root, name: name, pid: pid) }
                    throw error
                }
                // Still under the lock: whether the limit calls for an eviction, and the gauge's value, cost no
                // trip of their own.
                var bytes: Int?
                _ = try? db.run("SELECT bytes FROM totals WHERE id = 0") { bytes = Int($0.integer(0)) }
                return bytes
            }
        } catch {
            LocalFileSystem.remove(temporary)
            throw error
        }
        if let total { knownTotalBytes.store(total, ordering: .relaxed) }
        publish(.stored(key: key, size: data.count))
        if config.sizeLimit > 0, total.map({ $0 > config.sizeLimit }) ?? true {
            // The entry is stored whatever happens here: a failed eviction is retried by the next write or sweep.
            let evicted = (try? evictOverLimit(now: now, keeping: name)) ?? []
            if !evicted.isEmpty { publish(.evicted(fileNames: evicted)) }
        }
    }

    /// Replaces an entry's validators and restarts its expiration and its age (``EntryMetadata/created``, which
    /// freshness per `max-age` counts from), after a `304 Not Modified`. The payload is not touched.
    ///
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - validators: The validators of the `304` response.
    ///   - expiration: The new lifetime; nil (the default) for `config.expiration`.
    /// - Returns: False when there is no such entry (nothing is written then).
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` with
    ///   ``MagpieError/CacheFailureReason/indexFailed(path:message:)`` when the index cannot be updated.
    @discardableResult
    public func refresh(forKey key: String, validators: Validators, expiration: StorageExpiration? = nil) throws -> Bool {
        let now = config.clock.now()
        let lifetime = expiration ?? config.expiration
        let name = fileName(forKey: key)
        let changed = try withIndex { db in
            touches.withLock { _ = $0.entries.removeValue(forKey: name) }
            return try db.run(Self.refreshRow, [
                .real(now.timeIntervalSince1970), .real(now.timeIntervalSince1970), .real(lifetime.estimatedExpiration(since: now).timeIntervalSince1970),
                .optional(Self.renewableLifetime(lifetime)), .optional(validators.etag),
                .optional(validators.lastModified), .optional(validators.maxAge), .optional(validators.contentType),
                .optional(validators.cachingRecord), .text(name),
            ])
        }
        return changed > 0
    }

    // MARK: Reading

    /// The payload stored under `key`, or nil for a miss (absent, expired, or damaged: a
    /// payload whose checksum does not match is removed, never returned).
    ///
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - extendingExpiration: What this read does to the expiry; nil (the default) for `config.accessExtending`.
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be queried or the payload file
    ///   exists but cannot be read.
    public func value(forKey key: String, extendingExpiration: ExpirationExtending? = nil) throws -> Data? {
        try entry(forKey: key, extendingExpiration: extendingExpiration)?.data
    }

    /// The payload and metadata stored under `key`, or nil for a miss. Searches the
    /// read-only directories when this cache misses.
    ///
    /// A hit records the access time and applies `extendingExpiration`; the returned metadata already
    /// shows both, though the index is updated in batches (see ``flushAccessTimes()``).
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - extendingExpiration: What this read does to the expiry; nil (the default) for `config.accessExtending`.
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be queried or the payload file
    ///   exists but cannot be read.
    public func entry(forKey key: String, extendingExpiration: ExpirationExtending? = nil) throws -> (data: Data, metadata: EntryMetadata)? {
        let name = fileName(forKey: key)
        let config = self.config
        let now = config.clock.now()
        defer { sweepIfDue(now: now) }
        guard var metadata = try withIndex({ try Self.lookup($0, name) }).map(withPendingTouch), metadata.key == key
        else {
            return try readOnlyEntry(key: key, name: name, now: now)
        }
        if metadata.isExpired(at: now) {
            try removeIfUnchanged(name, checksum: metadata.checksum, expiredAt: now)
            return try readOnlyEntry(key: key, name: name, now: now)
        }
        guard let (data, current) = try verifiedPayload(name, metadata) else { return nil }
        metadata = current
        let extending = extendingExpiration ?? config.accessExtending
        let expires: Date
        switch extending {
        case .none: expires = metadata.expiration
        case .cacheTime: expires = metadata.lifetime.map { now.addingTimeInterval($0) } ?? metadata.expiration
        case .expirationTime(let lifetime): expires = lifetime.estimatedExpiration(since: now)
        }
        let (flushDue, firstPending) = touches.withLock { log -> (Bool, Bool) in
            let first = log.entries.isEmpty
            log.entries[name] = Touch(accessed: now, expires: expires, checksum: metadata.checksum)
            return (log.entries.count >= TouchLog.batchSize || log.lastFlush.duration(to: .now) > TouchLog.maximumDelay, first)
        }
        // A failed flush must not turn this hit into an error; the next flush retries what is new.
        if flushDue { try? flushAccessTimes() }
        if firstPending && !flushDue {
            // Also flush when reads stop: other processes decide evictions and expiry from the index.
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(1)) { [weak self] in try? self?.flushAccessTimes() }
        }
        metadata.lastAccess = now
        metadata.expiration = expires
        return (data, metadata)
    }

    /// The index's record for `key` (expired or not), without reading the payload or touching it.
    ///
    /// A key whose payload file is absent is answered without the index: no entry to serve.
    /// - Parameter key: The entry's key.
    /// - Returns: The metadata, or nil when this cache has no entry for `key` or its payload file is gone
    ///   (read-only directories are not searched).
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be queried.
    public func metadata(forKey key: String) throws -> EntryMetadata? {
        let name = fileName(forKey: key)
        // A committed row always has its file (a write renames the payload into place inside the transaction that
        // inserts the row; a removal deletes the row and the file in one transaction), so a missing file is a miss for
        // every process sharing the folder, at the cost of one access(2) instead of the index's lock and a query.
        // Freshness lookups of sources never fetched before (a server's cold requests) are the common case.
        guard LocalFileSystem.exists(path(of: name)) else { return nil }
        return try withIndex { try Self.lookup($0, name) }.map(withPendingTouch).flatMap { $0.key == key ? $0 : nil }
    }

    /// Writes pending access times and expiry extensions to the index now. Reads do this by
    /// themselves in batches; call it before handing the folder to another tool.
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be updated.
    public func flushAccessTimes() throws {
        let pending = touches.withLock { log -> [String: Touch] in
            defer {
                log.entries.removeAll(keepingCapacity: true)
                log.lastFlush = .now
            }
            return log.entries
        }
        guard !pending.isEmpty else { return }
        accessTimeFlushes.add(1, ordering: .relaxed)
        try withIndex { db in try db.transaction { try Self.apply(pending, to: db) } }
    }

    deinit {
        try? flushAccessTimes()
    }

    private func withPendingTouch(_ metadata: EntryMetadata) -> EntryMetadata {
        guard let touch = touches.withLock({ $0.entries[metadata.fileName] }), touch.checksum == metadata.checksum
        else { return metadata }
        var merged = metadata
        merged.lastAccess = max(merged.lastAccess, touch.accessed)
        merged.expiration = touch.expires
        return merged
    }

    /// Applies access updates inside an open transaction (rows replaced since are left alone).
    private static func apply(_ pending: [String: Touch], to db: SQLiteDatabase) throws {
        for (name, touch) in pending {
            try db.run(Self.touch, [
                .real(touch.accessed.timeIntervalSince1970), .real(touch.expires.timeIntervalSince1970), .text(name),
                .integer(Int64(touch.checksum)),
            ])
        }
    }

    /// Whether an unexpired entry for `key` is indexed (here or in a read-only directory) and its payload file exists;
    /// reads no payload, so a damaged one still counts. Index errors count as not cached.
    ///
    /// - Parameter key: The entry's key.
    public func isCached(forKey key: String) -> Bool {
        let now = config.clock.now()
        if let metadata = try? metadata(forKey: key), !metadata.isExpired(at: now) { return true }
        let name = fileName(forKey: key)
        return readOnlySources.contains { $0.contains(name: name, key: key, now: now) }
    }

    /// Where the payload for `key` lives in this cache's folder (whether or not it is cached).
    ///
    /// - Parameter key: The entry's key.
    public func fileURL(forKey key: String) -> URL {
        URL(fileURLWithPath: path(of: fileName(forKey: key)))
    }

    // MARK: Removing

    /// Removes the entry for `key`, if any, and publishes ``Event/removed(key:)`` when there was one.
    ///
    /// - Parameter key: The entry's key.
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be updated.
    public func remove(forKey key: String) throws {
        let name = fileName(forKey: key)
        let removed = try withIndex { db in
            try db.transaction { () throws -> Bool in
                let count = try db.run("DELETE FROM entries WHERE name = ?", [.text(name)])
                LocalFileSystem.remove(path(of: name))
                return count > 0
            }
        }
        if removed { publish(.removed(key: key)) }
    }

    /// Removes every entry, published as one ``Event/cleaned(fileNames:)``. Read-only directories are not touched.
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be updated.
    public func removeAll() throws {
        let names = try withIndex { db in
            try db.transaction { () throws -> [String] in
                let names = try Self.names(db, "SELECT name FROM entries", [])
                try db.run("DELETE FROM entries")
                for name in names { LocalFileSystem.remove(path(of: name)) }
                return names
            }
        }
        if !names.isEmpty { publish(.cleaned(fileNames: names)) }
    }

    /// Removes expired entries and returns their file names (also published as ``Event/cleaned(fileNames:)``).
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read or updated.
    @discardableResult
    public func removeExpired() throws -> [String] {
        try flushAccessTimes()  // a pending read may have extended an entry
        let now = config.clock.now().timeIntervalSince1970
        let names = try withIndex { db in
            try db.transaction { () throws -> [String] in
                let names = try Self.names(db, "SELECT name FROM entries WHERE expires <= ?", [.real(now)])
                try db.run("DELETE FROM entries WHERE expires <= ?", [.real(now)])
                for name in names { LocalFileSystem.remove(path(of: name)) }
                return names
            }
        }
        if !names.isEmpty { publish(.cleaned(fileNames: names)) }
        return names
    }

    /// Evicts down to half the size limit when over it (expired first, then least recently
    /// used); returns the evicted file names (also published as ``Event/evicted(fileNames:)``).
    /// Writes do this by themselves. Does nothing when ``Config/sizeLimit`` is 0.
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read or updated.
    @discardableResult
    public func enforceSizeLimit() throws -> [String] {
        guard config.sizeLimit > 0 else { return [] }
        let now = config.clock.now()
        let names = try evictOverLimit(now: now, keeping: nil)
        if !names.isEmpty { publish(.evicted(fileNames: names)) }
        return names
    }

    // MARK: Statistics

    /// Payload bytes of all entries, expired ones not yet removed included.
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read.
    public func totalSize() throws -> Int { try totals().bytes }

    /// Number of entries, expired ones not yet removed included.
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read.
    public func count() throws -> Int { try totals().count }

    /// Number of entries that have expired but not yet been removed.
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read or pending access times
    ///   cannot be written.
    public func expiredCount() throws -> Int {
        try flushAccessTimes()
        let now = config.clock.now().timeIntervalSince1970
        var count = 0
        try withIndex { db in
            _ = try db.run("SELECT COUNT(*) FROM entries WHERE expires <= ?", [.real(now)]) { count = Int($0.integer(0)) }
        }
        return count
    }

    private func totals() throws -> (bytes: Int, count: Int) {
        var result = (bytes: 0, count: 0)
        try withIndex { db in
            _ = try db.run("SELECT bytes, count FROM totals WHERE id = 0") { result = (Int($0.integer(0)), Int($0.integer(1))) }
        }
        return result
    }

    // MARK: Events

    /// A stream of what happens to this cache from now on (stores, removals, cleanings, evictions),
    /// through this instance only: other processes' changes are not seen. Keeps the newest 1024 events
    /// when the reader falls behind.
    public func events() -> AsyncStream<Event> {
        let id = nextSubscriber.withLock { value -> Int in
            value += 1
            return value
        }
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    private func publish(_ event: Event) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    // MARK: Internals

    /// SHA-256 of the key in hex (collision-resistant even for attacker-chosen URLs, unlike
    /// MD5), plus the key's path extension when configured.
    func fileName(forKey key: String) -> String {
        let hash = lowercaseHex(SHA256Hash.digest(key.utf8))
        guard config.keepsPathExtension, let ext = Self.pathExtension(of: key) else { return hash }
        return hash + "." + ext
    }

    func path(of name: String) -> String {
        root + "/entries/" + name.prefix(2) + "/" + name
    }

    /// The SQLite index of the storage in `root`.
    static func indexPath(root: String) -> String { root + "/index.sqlite" }

    static func pathExtension(of key: String) -> String? {
        let path = key.split(separator: "?", maxSplits: 1).first.map(String.init) ?? key
        guard let last = path.split(separator: "/").last, let dot = last.lastIndex(of: ".") else { return nil }
        let ext = last[last.index(after: dot)...]
        guard (1...8).contains(ext.count), ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return ext.lowercased()
    }

    /// Reads and checks the payload. A mismatch may be a concurrent writer replacing the
    /// file between the index lookup and the read: look once more before removing.
    private func verifiedPayload(_ name: String, _ metadata: EntryMetadata) throws -> (Data, EntryMetadata)? {
        var expected = metadata
        for attempt in 0..<2 {
            if let data = try Self.files({ () throws(FileSystemError) in try LocalFileSystem.read(path(of: name)) }),
                data.count == expected.size, LocalFileSystem.checksum(data) == expected.checksum
            {
                return (data, expected)
            }
            guard attempt == 0, let again = try withIndex({ try Self.lookup($0, name) }),
                again.checksum != expected.checksum
            else { break }
            expected = again
        }
        try removeIfUnchanged(name, checksum: expected.checksum)
        return nil
    }

    /// Removes an entry only if its row still has `checksum` (another writer may have replaced
    /// it) and, with `expiredAt`, only if it is still expired then (another process may have refreshed it).
    private func removeIfUnchanged(_ name: String, checksum: UInt32, expiredAt now: Date? = nil) throws {
        try withIndex { db in
            try db.transaction {
                let count = try db.run(
                    "DELETE FROM entries WHERE name = ? AND checksum = ? AND expires <= ?",
                    [.text(name), .integer(Int64(checksum)), .real(now?.timeIntervalSince1970 ?? .infinity)])
                if count > 0 { LocalFileSystem.remove(path(of: name)) }
            }
        }
    }

    /// Entries removed per transaction when evicting.
    private static let evictionBatch = 64

    /// Evicts down to half the size limit once over it, expired entries first, then the least recently used, in
    /// transactions of ``evictionBatch`` entries: a reader or writer of another entry waits for one batch at most,
    /// never for the whole eviction (a server's other requests stalled for most of a second when half of a large
    /// cache went in one transaction).
    private func evictOverLimit(now: Date, keeping kept: String?) throws -> [String] {
        let limit = config.sizeLimit
        var evicted: [String] = []
        var started = false
        while true {
            let batch = try withIndex { db in
                try db.transaction { () -> [String] in
                    var total = 0
                    try db.run("SELECT bytes FROM totals WHERE id = 0") { total = Int($0.integer(0)) }
                    guard total > (started ? limit / 2 : limit) else {
                        knownTotalBytes.store(total, ordering: .relaxed)
                        return []
                    }
                    // Recent reads must count before choosing what is least recently used.
                    let pending = touches.withLock { log -> [String: Touch] in
                        defer { log.entries.removeAll(keepingCapacity: true) }
                        return log.entries
                    }
                    try Self.apply(pending, to: db)
                    return try evictBatch(db, now: now, keeping: kept, bytesOver: total - limit / 2)
                }
            }
            if batch.isEmpty { return evicted }
            started = true
            evicted += batch
        }
    }

    /// Removes up to ``evictionBatch`` entries, together at least `bytesOver` bytes when there are that many.
    private func evictBatch(_ db: SQLiteDatabase, now: Date, keeping kept: String?, bytesOver: Int) throws -> [String] {
        let queries = [
            "SELECT name, size FROM entries WHERE expires <= ? AND name != ? ORDER BY expires LIMIT ?",
            "SELECT name, size FROM entries WHERE expires > ? AND name != ? ORDER BY accessed LIMIT ?",
        ]
        var remaining = bytesOver
        var evicted: [String] = []
        for query in queries where remaining > 0 && evicted.count < Self.evictionBatch {
            var candidates: [(String, Int)] = []
            let arguments: [SQLiteValue] = [
                .real(now.timeIntervalSince1970), .text(kept ?? ""), .integer(Int64(Self.evictionBatch - evicted.count)),
            ]
            try db.run(query, arguments) { row in candidates.append((row.text(0) ?? "", Int(row.integer(1)))) }
            for (name, size) in candidates where remaining > 0 {
                try db.run("DELETE FROM entries WHERE name = ?", [.text(name)])
                LocalFileSystem.remove(path(of: name))
                remaining -= size
                evicted.append(name)
            }
        }
        return evicted
    }

    private func readOnlyEntry(key: String, name: String, now: Date) throws -> (data: Data, metadata: EntryMetadata)? {
        for source in readOnlySources {
            if let found = try source.entry(name: name, key: key, now: now) { return found }
        }
        return nil
    }

    static func lookup(_ db: SQLiteDatabase, _ name: String, sql: String = selectEntry) throws -> EntryMetadata? {
        var result: EntryMetadata?
        try db.run(sql, [.text(name)]) { row in result = metadata(row) }
        return result
    }

    static func metadata(_ row: SQLiteRow) -> EntryMetadata {
        var validators = Validators(etag: row.text(8), lastModified: row.text(9), maxAge: row.optionalReal(10), contentType: row.text(11))
        if row.columnCount > 12 { validators.restoreCachingRecord(row.text(12)) }
        return EntryMetadata(
            key: row.text(1) ?? "", fileName: row.text(0) ?? "", size: Int(row.integer(2)),
            created: Date(timeIntervalSince1970: row.real(3)), lastAccess: Date(timeIntervalSince1970: row.real(4)),
            expiration: Date(timeIntervalSince1970: row.real(5)), checksum: UInt32(truncatingIfNeeded: row.integer(7)),
            validators: validators, lifetime: row.optionalReal(6))
    }

    static func names(_ db: SQLiteDatabase, _ sql: String, _ arguments: [SQLiteValue]) throws -> [String] {
        var names: [String] = []
        try db.run(sql, arguments) { if let name = $0.text(0) { names.append(name) } }
        return names
    }

    /// Seconds a `.cacheTime` extension adds again; nil for lifetimes that are not relative.
    static func renewableLifetime(_ expiration: StorageExpiration) -> Double? {
        switch expiration {
        case .seconds(let seconds): seconds
        case .days(let days): Double(days) * 86_400
        case .never, .date, .expired: nil
        }
    }

    /// Settles the pending record of one write (call inside a write transaction): a payload
    /// file whose checksum does not match its row (or that has no row) is removed, then the
    /// record. Writers are told apart by pid, so processes in different pid namespaces (two
    /// containers sharing a volume) must not share one cache folder.
    static func reconcilePending(_ db: SQLiteDatabase, root: String, name: String, pid: Int64) {
        let path = root + "/entries/" + name.prefix(2) + "/" + name
        if let metadata = try? lookup(db, name) {
            if let data = try? LocalFileSystem.read(path), LocalFileSystem.checksum(data) != metadata.checksum {
                LocalFileSystem.remove(path)
            }
        } else {
            LocalFileSystem.remove(path)
        }
        _ = try? db.run("DELETE FROM pending WHERE name = ? AND pid = ?", [.text(name), .integer(pid)])
    }

    /// Pending records of processes that no longer run are writes cut short: reconcile them.
    private static func reconcileAbandonedWrites(_ db: SQLiteDatabase, root: String) {
        var abandoned: [(String, Int64)] = []
        _ = try? db.run("SELECT name, pid FROM pending") { row in
            let pid = row.integer(1)
            if kill(pid_t(truncatingIfNeeded: pid), 0) != 0 && errno == ESRCH, let name = row.text(0) {
                abandoned.append((name, pid))
            }
        }
        for (name, pid) in abandoned {
            // Under the write lock, so no live writer is halfway through the same name.
            try? db.transaction { reconcilePending(db, root: root, name: name, pid: pid) }
        }
    }

    /// Temporary files are named `<pid>-<random>`: those of processes that are gone are leftovers.
    /// Interrupted downloads kept to be resumed are kept a day; bodies that dead processes were writing go at once, and
    /// any file untouched for a day goes too (a writer's pid may have been reused by a process that never wrote it).
    private static func removeAbandonedSpoolFiles(in directory: String, now: Date) {
        for name in LocalFileSystem.contents(of: directory) {
            let path = directory + "/" + name
            if let pid = name.split(separator: "-").first.flatMap({ Int32($0) }), kill(pid, 0) != 0, errno == ESRCH {
                LocalFileSystem.remove(path)
            } else if let modified = LocalFileSystem.modificationDate(path), now.timeIntervalSince(modified) > 86_400 {
                LocalFileSystem.remove(path)
            }
        }
    }

    private static func removeAbandonedTemporaryFiles(in directory: String) {
        for name in LocalFileSystem.contents(of: directory) {
            guard let pid = name.split(separator: "-").first.flatMap({ Int32($0) }) else {
                LocalFileSystem.remove(directory + "/" + name)
                continue
            }
            if kill(pid, 0) != 0 && errno == ESRCH { LocalFileSystem.remove(directory + "/" + name) }
        }
    }
}

extension DiskStorage {
    /// Runs file system calls, reporting their failure as the cache's own: the entries, temporary files and spool
    /// folder of a cache are the cache's business, whatever layer's calls reached them.
    static func files<T>(_ body: () throws(FileSystemError) -> T) throws(MagpieError) -> T {
        do {
            return try body()
        } catch {
            throw .cacheFailed(reason: MagpieError.CacheFailureReason(error))
        }
    }
}

extension MagpieError.CacheFailureReason {
    /// The cache's reason for a failed file system call: a folder that cannot be made, a file that cannot be written
    /// (disk full told apart) or read.
    ///
    /// - Parameter error: The failed call.
    package init(_ error: FileSystemError) {
        switch error.operation {
        case .createDirectory: self = .cannotCreateDirectory(path: error.path, message: error.message)
        case .read: self = .cannotRead(path: error.path, message: error.message)
        case .write: self = .cannotWrite(path: error.path, message: error.message, diskFull: error.isDiskFull)
        }
    }
}
