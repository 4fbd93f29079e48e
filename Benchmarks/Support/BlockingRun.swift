import Dispatch
import Synchronization

/// Runs `body` on a detached task and blocks the calling thread until it has finished, returning what it returned.
///
/// A benchmark whose instructions callgrind counts calls its async work through this from a synchronous main, rather
/// than awaiting in top-level code: top-level `await` makes Swift's async main, which on Linux parks the main thread
/// in libdispatch (`dispatch_main`, then `sigsuspend` from a thread-specific-data destructor), and valgrind 3.19
/// crashes on that with a SIGSEGV of its own, whatever the tool (`--tool=none` included). The timed work runs on the
/// cooperative pool either way; only the idle main thread waits differently.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let outcome = Mutex<T?>(nil)
    let finished = DispatchSemaphore(value: 0)
    Task.detached {
        let value = await body()
        outcome.withLock { $0 = value }
        finished.signal()
    }
    finished.wait()
    return outcome.withLock { $0! }
}

/// ``runBlocking(_:)`` for a body that throws: its error is thrown here.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    try runBlocking { () async -> Result<T, any Error> in
        do { return .success(try await body()) } catch { return .failure(error) }
    }.get()
}
