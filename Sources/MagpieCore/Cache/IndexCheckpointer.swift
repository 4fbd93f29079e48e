import Synchronization

/// Checkpoints a ``DiskStorage`` index's write-ahead log on a connection of its own, as a job of the I/O executor,
/// instead of inside the commit that fills it.
///
/// SQLite's auto-checkpoint runs in whichever commit takes the log past 1,000 pages, and syncs the log and the
/// database file there. The index has one connection behind one lock, so every request of the process waited for
/// those two syncs: milliseconds on a quiet disk, seconds on a shared VM's disk that stalls (measured: a cold
/// `magpie serve` cell at half its CPU with a p99 of 18.7 s). A passive checkpoint on a second connection waits for
/// no reader or writer, and the index's connection goes on committing to the log meanwhile.
final class IndexCheckpointer: Sendable {
    /// The log's size in pages from which a checkpoint starts: SQLite's own auto-checkpoint size.
    static let pagesBeforeCheckpoint = 1_000

    private let path: String
    private let executor: BoundedExecutor
    /// Opened at the first checkpoint, without creating the file: a folder removed meanwhile is not made again.
    private let connection = Mutex<SQLiteDatabase?>(nil)
    private let scheduled = Atomic<Bool>(false)
    private let checkpoints = Atomic<Int>(0)
    private let jobs = PendingWork()

    /// - Parameters:
    ///   - path: The index's database file.
    ///   - executor: Where the checkpoints (file I/O and syncs) run.
    init(path: String, executor: BoundedExecutor) {
        self.path = path
        self.executor = executor
    }

    /// How many checkpoints have run, whether or not they copied the whole log (or failed: a removed folder).
    var checkpointCount: Int { checkpoints.load(ordering: .relaxed) }

    /// Called by the index's connection after each commit, under the index's lock: only starts a job.
    func committed(pagesInLog pages: Int) {
        guard pages >= Self.pagesBeforeCheckpoint,
            scheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        let executor = self.executor
        jobs.start(priority: .background) {
            _ = try? await executor.run { _ in try self.checkpointNow() }
            self.scheduled.store(false, ordering: .releasing)
        }
    }

    /// A passive checkpoint now, on this checkpointer's connection; the log's pages and how many are in the database.
    @discardableResult
    func checkpointNow() throws -> (logPages: Int, checkpointedPages: Int) {
        defer { checkpoints.add(1, ordering: .relaxed) }
        return try connection.withLock { connection in
            if connection == nil { connection = try SQLiteDatabase(path: path, creating: false) }
            return try connection!.checkpoint()
        }
    }

    /// Waits for the checkpoints started so far.
    func waitUntilIdle() async {
        await jobs.waitUntilIdle()
    }
}
