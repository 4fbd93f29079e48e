#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When the next use-driven sweep of a ``DiskStorage`` is due.
struct SweepSchedule: Sendable {
    /// Seconds since 1970 (by the storage's clock) from which the next read or write starts a sweep.
    var due: TimeInterval = .infinity
    var running = false
}

extension DiskStorage {
    /// Removes expired entries, then evicts down to half the size limit when over it, and records the time in the
    /// index (so other processes and the next opening know). The use-driven sweeps call this in the background.
    ///
    /// - Returns: The file names removed, expired ones first.
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read or updated.
    @discardableResult
    public func sweep() throws -> [String] {
        let removed = try removeExpired() + enforceSizeLimit()
        let now = config.clock.now().timeIntervalSince1970
        try withIndex { db in
            _ = try db.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_sweep', ?)", [.real(now)])
        }
        return removed
    }

    /// When the last sweep of this folder finished (by any process), from the index; nil when never.
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read.
    public func lastSweepDate() throws -> Date? {
        var last: Date?
        try withIndex { db in
            _ = try db.run("SELECT value FROM meta WHERE key = 'last_sweep'") { row in
                last = Date(timeIntervalSince1970: row.real(0))
            }
        }
        return last
    }

    /// At open: sweep now when the last sweep is older than the interval (or there was none), else plan the next.
    func scheduleFirstSweep() {
        let config = self.config
        let now = config.clock.now()
        var last = (try? lastSweepDate())?.timeIntervalSince1970
        if last == nil, (try? count()) == 0 {
            // A new cache has nothing to sweep: its first sweep is one interval away.
            try? withIndex { db in
                _ = try db.run("INSERT OR IGNORE INTO meta (key, value) VALUES ('last_sweep', ?)", [.real(now.timeIntervalSince1970)])
            }
            last = now.timeIntervalSince1970
        }
        guard config.sweepInterval > 0 else { return }
        let due = (last ?? -.infinity) + config.sweepInterval
        sweepSchedule.withLock { $0.due = due }
        sweepIfDue(now: now)
    }

    /// Starts a background sweep when one is due and none runs; one lock otherwise.
    func sweepIfDue(now: Date) {
        startSweep { now.timeIntervalSince1970 >= $0.due }
    }

    /// Starts a sweep now unless one runs (a lowered size limit asks for this).
    func sweepInBackground() {
        startSweep { _ in true }
    }

    /// Starts a sweep when none runs and `wanted` says so, deciding under the schedule's lock.
    private func startSweep(when wanted: (SweepSchedule) -> Bool) {
        let start = sweepSchedule.withLock { schedule -> Bool in
            guard !schedule.running, wanted(schedule) else { return false }
            schedule.running = true
            return true
        }
        if start { runSweep() }
    }

    private func runSweep() {
        let executor = config.ioExecutor
        sweeps.start(priority: .background) {
            _ = try? await executor.run { _ in try self.sweep() }
            let config = self.config
            let now = config.clock.now().timeIntervalSince1970
            self.sweepSchedule.withLock { schedule in
                schedule.running = false
                schedule.due = config.sweepInterval > 0 ? now + config.sweepInterval : .infinity
            }
        }
    }

    /// Waits for background sweeps started so far.
    package func waitForSweeps() async {
        await sweeps.waitUntilIdle()
    }
}
