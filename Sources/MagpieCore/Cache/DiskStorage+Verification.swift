#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskStorage {
    /// What ``DiskStorage/verify(repair:checkingPayload:)`` found.
    public struct VerificationReport: Sendable, Equatable {
        /// Index rows looked at (rows removed by another writer during the walk are not counted).
        public var checked = 0
        /// Entries whose file has the indexed size and CRC-32 (and passed the payload check, when given).
        public var intact = 0
        /// Entries that failed a check, in file-name order.
        public var damaged: [DamagedEntry] = []
        /// Files below `entries/` that no index row accounts for, as paths relative to
        /// ``DiskStorage/directoryURL`` (`entries/ab/ab12…`).
        public var orphans: [String] = []
        /// Files in `tmp/`: writes in progress in running processes (opening the storage removes those
        /// of processes that are gone).
        public var temporaryFiles = 0
        /// True when the walk ran with `repair`: the damaged entries and orphans listed are gone now.
        public var repaired = false

        /// True when nothing is damaged and nothing is orphaned.
        public var isClean: Bool { damaged.isEmpty && orphans.isEmpty }
    }

    /// One entry that did not pass verification.
    public struct DamagedEntry: Sendable, Equatable {
        /// The key the entry was stored under.
        public var key: String
        /// Its file name below `entries/`.
        public var fileName: String
        /// What is wrong with it.
        public var reason: DamageReason
    }

    /// Why an entry counts as damaged.
    public enum DamageReason: Sendable, Equatable, CustomStringConvertible {
        /// The index has a row but the payload file is gone.
        case missingFile
        /// The file's size differs from the indexed one.
        case sizeMismatch(expected: Int, actual: Int)
        /// The file's CRC-32 differs from the indexed one.
        case checksumMismatch(expected: UInt32, actual: UInt32)
        /// The file exists but could not be read; `message` is the system's reason.
        case unreadable(message: String)
        /// The bytes are intact but the caller's payload check refused them; `message` is its error.
        case rejected(message: String)

        /// A short lowercase phrase, e.g. `checksum mismatch (index 0x1a2b3c4d, file 0x00ff00ff)`.
        public var description: String {
            switch self {
            case .missingFile: "missing file"
            case .sizeMismatch(let expected, let actual): "size mismatch (index \(expected) bytes, file \(actual))"
            case .checksumMismatch(let expected, let actual): "checksum mismatch (index 0x\(expected.hexDigits), file 0x\(actual.hexDigits))"
            case .unreadable(let message): "unreadable: \(message)"
            case .rejected(let message): message
            }
        }
    }

    /// Checks every indexed entry against its file (size and CRC-32), lists files no row accounts for
    /// (orphans) and counts temporary files; with `repair`, removes the damaged entries and the orphans.
    ///
    /// Walks the index in pages rather than scanning folders for entries, and reads one payload at a time,
    /// so memory stays flat for any cache size. Every problem is confirmed under the index's write lock
    /// before it is reported, so entries being written or removed by this or other processes at the same
    /// time are not reported as damaged or orphaned. Read-only directories are not verified.
    ///
    /// Blocks on file I/O (it reads every payload): call it off the cooperative pool.
    /// - Parameters:
    ///   - repair: Remove damaged entries (file and row) and orphan files. Default false: only report.
    ///   - checkingPayload: Called with each entry whose bytes are intact; an error it throws marks the entry
    ///     damaged with ``DamageReason/rejected(message:)`` (for example an image that does not decode).
    /// - Returns: What was found (and, with `repair`, removed).
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` with ``MagpieError/CacheFailureReason/indexFailed(path:message:)``
    ///   when the index cannot be read or updated.
    public func verify(
        repair: Bool = false, checkingPayload: ((EntryMetadata, Data) throws -> Void)? = nil
    ) throws -> VerificationReport {
        let root = directoryURL.path
        // A connection of its own: the storage's is private to it, and SQLite's locking keeps the two
        // consistent exactly as it does for other processes.
        let db = try SQLiteDatabase(path: Self.indexPath(root: root))
        var report = VerificationReport()
        report.repaired = repair
        var after = ""
        while true {
            var page: [EntryMetadata] = []
            try db.run(Self.selectEntryPage, [.text(after), .integer(Int64(Self.verificationPageSize))]) { page.append(Self.metadata($0)) }
            guard let last = page.last else { break }
            after = last.fileName
            for entry in page {
                switch try verdict(on: entry, db: db, repair: repair, check: checkingPayload) {
                case .intact:
                    report.checked += 1
                    report.intact += 1
                case .damaged(let current, let reason):
                    report.checked += 1
                    report.damaged.append(DamagedEntry(key: current.key, fileName: current.fileName, reason: reason))
                case .gone:
                    break  // removed or evicted by another writer during the walk: not ours to count
                }
            }
        }
        report.orphans = try orphans(db: db, root: root, repair: repair)
        report.temporaryFiles = LocalFileSystem.contents(of: root + "/tmp").count
        return report
    }

    static let verificationPageSize = 512

    /// The entry's state. A problem seen at first is looked at again under the write lock, against the row as
    /// it is then (a writer may have replaced or removed it meanwhile); with `repair` a confirmed one is removed.
    private func verdict(
        on entry: EntryMetadata, db: SQLiteDatabase, repair: Bool, check: ((EntryMetadata, Data) throws -> Void)?
    ) throws -> EntryVerdict {
        guard let first = Self.damage(of: entry, at: path(of: entry.fileName), check: check) else { return .intact }
        if case .rejected = first {
            // The bytes matched their row, so a concurrent writer is not the cause: no need to look again.
            if repair { try removeEntry(entry, db: db) }
            return .damaged(entry, first)
        }
        // The payload check (a decode, say) is slow: run it outside the lock, on bytes that matched then.
        let confirmed = try db.transaction { () throws -> (EntryMetadata, DamageReason?)? in
            guard let current = try Self.lookup(db, entry.fileName) else { return nil }
            guard let reason = Self.damage(of: current, at: path(of: current.fileName), check: nil) else { return (current, nil) }
            if repair {
                try db.run("DELETE FROM entries WHERE name = ?", [.text(current.fileName)])
                LocalFileSystem.remove(path(of: current.fileName))
            }
            return (current, reason)
        }
        guard let (current, reason) = confirmed else { return .gone }
        if let reason { return .damaged(current, reason) }
        // Bytes that changed since were replaced by a writer (they matched under the lock): only a refusal counts.
        guard let rejected = Self.damage(of: current, at: path(of: current.fileName), check: check),
            case .rejected = rejected
        else { return .intact }
        if repair { try removeEntry(current, db: db) }
        return .damaged(current, rejected)
    }

    /// What is wrong with the payload of `entry` at `path`, or nil when it matches its row and passes `check`.
    private static func damage(
        of entry: EntryMetadata, at path: String, check: ((EntryMetadata, Data) throws -> Void)?
    ) -> DamageReason? {
        let data: Data
        do {
            guard let read = try LocalFileSystem.read(path) else { return .missingFile }
            data = read
        } catch {
            return .unreadable(message: error.message)
        }
        if data.count != entry.size { return .sizeMismatch(expected: entry.size, actual: data.count) }
        let checksum = LocalFileSystem.checksum(data)
        if checksum != entry.checksum { return .checksumMismatch(expected: entry.checksum, actual: checksum) }
        do {
            try check?(entry, data)
        } catch {
            return .rejected(message: "\(error)")
        }
        return nil
    }

    /// Removes `entry` only if its row still has the same checksum (a writer may have replaced it).
    private func removeEntry(_ entry: EntryMetadata, db: SQLiteDatabase) throws {
        try db.transaction {
            let count = try db.run(
                "DELETE FROM entries WHERE name = ? AND checksum = ?", [.text(entry.fileName), .integer(Int64(entry.checksum))])
            if count > 0 { LocalFileSystem.remove(path(of: entry.fileName)) }
        }
    }

    /// Files below `entries/` without a row (or in the wrong bucket), confirmed under the write lock:
    /// a writer renames its file into place inside the transaction that adds the row.
    private func orphans(db: SQLiteDatabase, root: String, repair: Bool) throws -> [String] {
        var found: [String] = []
        let entries = root + "/entries"
        for bucket in LocalFileSystem.contents(of: entries).sorted() {
            let folder = entries + "/" + bucket
            guard case .success(let kind) = LocalFileSystem.kind(of: folder) else { continue }
            guard kind == .directory else {
                // A stray file beside the buckets.
                try confirmOrphan(entries + "/" + bucket, relative: "entries/" + bucket, name: nil, db: db, repair: repair, into: &found)
                continue
            }
            for name in LocalFileSystem.contents(of: folder).sorted() {
                let indexed = name.hasPrefix(bucket) ? name : nil
                if let indexed, try Self.lookup(db, indexed) != nil { continue }
                try confirmOrphan(folder + "/" + name, relative: "entries/\(bucket)/\(name)", name: indexed, db: db, repair: repair, into: &found)
            }
        }
        return found
    }

    /// `name` is the file's would-be row (nil when its location rules a row out).
    private func confirmOrphan(
        _ path: String, relative: String, name: String?, db: SQLiteDatabase, repair: Bool, into found: inout [String]
    ) throws {
        let orphaned = try db.transaction { () throws -> Bool in
            guard LocalFileSystem.exists(path) else { return false }
            if let name, try Self.lookup(db, name) != nil { return false }
            if repair { LocalFileSystem.remove(path) }
            return true
        }
        if orphaned { found.append(relative) }
    }
}

/// One entry's outcome in `DiskStorage.verify`.
private enum EntryVerdict {
    case intact
    case damaged(DiskStorage.EntryMetadata, DiskStorage.DamageReason)
    /// The row disappeared before the problem could be confirmed.
    case gone
}
