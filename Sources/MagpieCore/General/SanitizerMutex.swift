#if MAGPIE_TSAN_LOCKS
#if canImport(Glibc)
import Glibc
#endif

/// Only in ThreadSanitizer builds (`scripts/sanitize thread` sets `MAGPIE_TSAN_LOCKS=1`): Synchronization's `Mutex`
/// locks with a futex inside an uninstrumented library on Linux, so TSan sees none of its ordering and reports every
/// access it guards as a race (a two-thread probe with one `Mutex` is enough). This lock has the same shape over
/// `pthread_mutex_t`, which TSan intercepts, and shadows `Synchronization.Mutex` for Magpie and the modules that
/// import it — so the run checks the locking the code actually does.
package final class Mutex<Value: ~Copyable>: @unchecked Sendable {
    private var value: Value
    private let lock: UnsafeMutablePointer<pthread_mutex_t>

    /// A lock guarding `initialValue`.
    package init(_ initialValue: consuming Value) {
        value = initialValue
        lock = .allocate(capacity: 1)
        // Error-checking, so a recursive lock traps as Synchronization's does instead of deadlocking silently.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(lock, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        precondition(pthread_mutex_lock(lock) == 0, "Mutex locked twice by the same thread")
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }
}
#endif
