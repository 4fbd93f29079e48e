import CSQLite
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A single SQLite connection with cached prepared statements.
///
/// Not thread-safe by itself: `DiskStorage` serialises every use behind its `Mutex`.
/// Other processes are kept consistent by SQLite's own file locking (WAL mode, busy timeout).
// @unchecked: every use happens inside Mutex.withLock, which region checking cannot see
// through when row callbacks capture locals.
final class SQLiteDatabase: @unchecked Sendable {
    let path: String
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// What the commit hook calls (``checkpointInBackground(_:)``), kept for as long as the connection.
    private var commitObserver: IndexCheckpointer?

    /// Opens the database at `path`, creating it when `readOnly` is false and `creating` true.
    init(path: String, readOnly: Bool = false, creating: Bool = true) throws {
        self.path = path
        let flags = readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | (creating ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, flags, nil)
        handle = db
        guard status == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            handle = nil
            throw MagpieError.cacheFailed(reason: .indexFailed(path: path, message: message))
        }
        // Writers in other processes hold the lock for milliseconds: wait, don't fail.
        sqlite3_busy_timeout(db, 10_000)
        // SQLite's own page cache (2 MiB per connection by default) holds pages that the kernel's page cache holds
        // too; 512 KiB keeps the index's upper levels, and a miss is one pread. magpie serve opens two connections,
        // and their default caches were 3.7 of its 17 MiB of live heap after three minutes of cold requests.
        sqlite3_exec(db, "PRAGMA cache_size=-512", nil, nil, nil)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    func failure(_ context: String) -> MagpieError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        if let handle, sqlite3_errcode(handle) == SQLITE_FULL {
            return MagpieError.cacheFailed(reason: .cannotWrite(path: path, message: message, diskFull: true))
        }
        return MagpieError.cacheFailed(reason: .indexFailed(path: path, message: "\(context): \(message)"))
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw failure(sql) }
    }

    /// Runs idempotent statements, trying again for up to `seconds` while SQLite answers "busy" without waiting.
    ///
    /// Two processes opening a new index at once both need the exclusive lock that switching to WAL takes; SQLite
    /// refuses one of them at once rather than calling the busy handler (waiting could deadlock), and a fresh-clone
    /// CI run saw `PRAGMA journal_mode=WAL: database is locked` from two `magpie fetch` processes started together.
    func executeRetryingWhileBusy(_ sql: String, seconds: Int = 10) throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let status = sqlite3_exec(handle, sql, nil, nil, nil)
            if status == SQLITE_OK { return }
            let primary = status & 0xFF
            guard primary == SQLITE_BUSY || primary == SQLITE_LOCKED, ContinuousClock.now < deadline else {
                throw failure(sql)
            }
            sqlite3_sleep(5)
        }
    }

    /// Runs `sql` with `arguments` bound in order, calling `row` for each result row.
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLiteValue] = [], row: ((SQLiteRow) throws -> Void)? = nil) throws -> Int {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let status: Int32
            switch argument {
            case .null: status = sqlite3_bind_null(statement, position)
            case .integer(let value): status = sqlite3_bind_int64(statement, position, value)
            case .real(let value): status = sqlite3_bind_double(statement, position, value)
            case .text(let value): status = sqlite3_bind_text(statement, position, value, -1, sqliteTransient)
            }
            guard status == SQLITE_OK else { throw failure("bind \(sql)") }
        }
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw failure(sql) }
            try row?(SQLiteRow(statement: statement))
        }
        return Int(sqlite3_changes(handle))
    }

    /// Hands this connection's write-ahead log to `checkpointer` after every commit, in place of SQLite's
    /// auto-checkpoint, which copies the log into the database file (and syncs both) inside the commit that crosses
    /// 1,000 pages: under the index's lock, so every reader and writer of the process waited for two disk syncs.
    func checkpointInBackground(_ checkpointer: IndexCheckpointer) {
        commitObserver = checkpointer
        sqlite3_wal_hook(handle, { context, _, _, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<IndexCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(pagesInLog: Int(pages))
            return SQLITE_OK
        }, Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    /// A passive checkpoint: copies what it can of the write-ahead log into the database file, waiting for no reader
    /// or writer. Returns the log's pages and how many of them are now in the database file.
    func checkpoint() throws -> (logPages: Int, checkpointedPages: Int) {
        var log: Int32 = 0, done: Int32 = 0
        let status = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done)
        guard status == SQLITE_OK else { throw failure("checkpoint") }
        return (Int(log), Int(done))
    }

    /// Runs `body` in a transaction; IMMEDIATE takes the write lock up front, so writers
    /// in other processes queue instead of failing halfway.
    func transaction<R>(immediate: Bool = true, _ body: () throws -> R) throws -> R {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else { throw failure("prepare \(sql)") }
        statements[sql] = statement
        return statement
    }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    static func optional(_ text: String?) -> SQLiteValue { text.map(SQLiteValue.text) ?? .null }
    static func optional(_ real: Double?) -> SQLiteValue { real.map(SQLiteValue.real) ?? .null }
}

/// The current row of a stepping statement.
struct SQLiteRow {
    let statement: OpaquePointer

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func real(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: pointer)
    }
    func optionalReal(_ column: Int32) -> Double? { isNull(column) ? nil : real(column) }
    /// The number of columns the statement returns.
    var columnCount: Int32 { sqlite3_column_count(statement) }
}

/// SQLITE_TRANSIENT: SQLite copies bound text before the call returns.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
