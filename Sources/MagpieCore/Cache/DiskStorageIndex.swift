#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The SQL of DiskStorage's index. Dates are seconds since 1970; `lifetime` is what a
/// `.cacheTime` read adds again. Triggers keep `totals` exact in the same transaction as
/// every change, so the size limit never needs a scan (and holds across processes).
extension DiskStorage {
    static let schema = """
        PRAGMA journal_mode=WAL;
        PRAGMA synchronous=NORMAL;
        CREATE TABLE IF NOT EXISTS entries (
            name TEXT PRIMARY KEY NOT NULL,
            key TEXT NOT NULL,
            size INTEGER NOT NULL,
            created REAL NOT NULL,
            accessed REAL NOT NULL,
            expires REAL NOT NULL,
            lifetime REAL,
            checksum INTEGER NOT NULL,
            etag TEXT,
            last_modified TEXT,
            max_age REAL,
            content_type TEXT,
            http TEXT
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS entries_by_access ON entries(accessed);
        CREATE INDEX IF NOT EXISTS entries_by_expiry ON entries(expires);
        CREATE TABLE IF NOT EXISTS totals (id INTEGER PRIMARY KEY CHECK (id = 0), bytes INTEGER NOT NULL, count INTEGER NOT NULL);
        INSERT OR IGNORE INTO totals VALUES (0, 0, 0);
        CREATE TABLE IF NOT EXISTS pending (name TEXT NOT NULL, pid INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY NOT NULL, value REAL NOT NULL);
        CREATE TRIGGER IF NOT EXISTS entries_inserted AFTER INSERT ON entries
            BEGIN UPDATE totals SET bytes = bytes + NEW.size, count = count + 1 WHERE id = 0; END;
        CREATE TRIGGER IF NOT EXISTS entries_deleted AFTER DELETE ON entries
            BEGIN UPDATE totals SET bytes = bytes - OLD.size, count = count - 1 WHERE id = 0; END;
        CREATE TRIGGER IF NOT EXISTS entries_resized AFTER UPDATE OF size ON entries
            BEGIN UPDATE totals SET bytes = bytes - OLD.size + NEW.size WHERE id = 0; END;

        """

    static let upsert = """
        INSERT INTO entries (name, key, size, created, accessed, expires, lifetime, checksum,
                             etag, last_modified, max_age, content_type, http)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(name) DO UPDATE SET key = excluded.key, size = excluded.size, created = excluded.created,
            accessed = excluded.accessed, expires = excluded.expires, lifetime = excluded.lifetime,
            checksum = excluded.checksum, etag = excluded.etag, last_modified = excluded.last_modified,
            max_age = excluded.max_age, content_type = excluded.content_type, http = excluded.http
        """

    static let selectEntry = """
        SELECT name, key, size, created, accessed, expires, lifetime, checksum, etag, last_modified, max_age, content_type,
            http
        FROM entries WHERE name = ?
        """

    /// ``selectEntry`` for an index written before the `http` column existed (a read-only folder is never migrated).
    static let selectEntryWithoutHTTP = """
        SELECT name, key, size, created, accessed, expires, lifetime, checksum, etag, last_modified, max_age, content_type
        FROM entries WHERE name = ?
        """

    /// Adds the column of RFC 9111 facts (``HTTPValidators/cachingRecord``) to an index made before it existed.
    /// Older Magpie versions name their columns when they write, so they keep working with it.
    static let addHTTPColumn = "ALTER TABLE entries ADD COLUMN http TEXT"

    /// Up to `?` (second) rows after the file name `?` (first), in name order: a walk over the whole index in pages.
    static let selectEntryPage = """
        SELECT name, key, size, created, accessed, expires, lifetime, checksum, etag, last_modified, max_age, content_type,
            http
        FROM entries WHERE name > ? ORDER BY name LIMIT ?
        """

    static let touch = "UPDATE entries SET accessed = ?, expires = ? WHERE name = ? AND checksum = ?"

    static let refreshRow = """
        UPDATE entries SET created = ?, accessed = ?, expires = ?, lifetime = ?, etag = ?, last_modified = ?, max_age = ?,
            content_type = ?, http = ? WHERE name = ?
        """

    /// Another cache folder searched on a miss and never written: through its index when it
    /// has one (checksums verified, expiry honoured), else files named like ours.
    final class ReadOnlySource: Sendable {
        let root: String
        private let index: Mutex<SQLiteDatabase?>

        init(root: String) {
            self.root = root
            let indexPath = DiskStorage.indexPath(root: root)
            index = Mutex(LocalFileSystem.exists(indexPath) ? try? SQLiteDatabase(path: indexPath, readOnly: true) : nil)
        }

        private func filePath(_ name: String) -> String? {
            [root + "/entries/" + name.prefix(2) + "/" + name, root + "/" + name].first(where: LocalFileSystem.exists)
        }

        private var hasIndex: Bool { index.withLock { $0 != nil } }

        /// The indexed row; with an index, only an indexed entry counts (a file without a row
        /// may be a killed writer's leftover).
        private func indexed(_ name: String) throws -> EntryMetadata? {
            try index.withLock { db in
                guard let db else { return nil }
                // A folder written by an older version has no `http` column, and a read-only index is never migrated.
                do { return try DiskStorage.lookup(db, name) } catch { return try DiskStorage.lookup(db, name, sql: DiskStorage.selectEntryWithoutHTTP) }
            }
        }

        func contains(name: String, key: String, now: Date) -> Bool {
            if hasIndex {
                guard let metadata = try? indexed(name) else { return false }
                return metadata.key == key && !metadata.isExpired(at: now)
            }
            return filePath(name) != nil
        }

        func entry(name: String, key: String, now: Date) throws -> (data: Data, metadata: EntryMetadata)? {
            let withIndex = hasIndex
            let indexed = withIndex ? try indexed(name) : nil
            if withIndex && indexed == nil { return nil }
            guard let path = filePath(name),
                let data = try DiskStorage.files({ () throws(FileSystemError) in try LocalFileSystem.read(path) })
            else { return nil }
            if let indexed {
                guard indexed.key == key, !indexed.isExpired(at: now), data.count == indexed.size,
                    LocalFileSystem.checksum(data) == indexed.checksum
                else { return nil }
                return (data, indexed)
            }
            let metadata = EntryMetadata(
                key: key, fileName: name, size: data.count, created: now, lastAccess: now,
                expiration: .distantFuture, checksum: LocalFileSystem.checksum(data), validators: Validators())
            return (data, metadata)
        }
    }
}
