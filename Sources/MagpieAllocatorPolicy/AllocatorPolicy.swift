#if canImport(Glibc)
import Glibc
#endif

/// How the process's allocator returns memory, for a long-running image server.
///
/// A target of its own, linked by executables only (`magpie`, `magpie-allocator-check`): the allocator belongs to the
/// whole process, so no library product tunes it. `magpie serve` calls ``returnLargeBlocksToTheSystem(threshold:)`` at
/// start and hands ``releaseFreeMemory()`` to `ImageServerService.releaseFreeMemory`.
public enum AllocatorPolicy {
    /// glibc's default; an operator's `MALLOC_MMAP_THRESHOLD_` replaces it before the process starts.
    public static let defaultThreshold = 128 * 1024

    /// Keeps blocks of `threshold` bytes and more (decoded pixels, encoded results) in mappings of their own, which
    /// go back to the kernel when freed.
    ///
    /// glibc starts with that threshold but raises it each time such a block is freed (up to 32 MiB), after which
    /// those blocks come from the heap and their pages stay with the process: measured under a cold load with an
    /// 8 MiB result cache, RSS 105 → 113 MiB (anonymous 56 → 63 MiB) over four minutes by default, 78–80 MiB
    /// (anonymous 27–31 MiB) with the threshold fixed, at the same requests per second.
    ///
    /// Does nothing when `MALLOC_MMAP_THRESHOLD_` is set (the operator chose) or the allocator is not glibc's
    /// (jemalloc, as in the `magpie` executable; a sanitizer's; another libc).
    ///
    /// - Returns: Whether the threshold was fixed.
    @discardableResult
    public static func returnLargeBlocksToTheSystem(threshold: Int = defaultThreshold) -> Bool {
        #if canImport(Glibc)
        guard getenv("MALLOC_MMAP_THRESHOLD_") == nil, threshold > 0, threshold <= Int(Int32.max),
            let symbol = glibcFunction("mallopt")
        else { return false }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        // M_MMAP_THRESHOLD is -3.
        return unsafeBitCast(symbol, to: Mallopt.self)(-3, Int32(threshold)) == 1
        #else
        return false
        #endif
    }

    /// Gives the free pages inside every allocator arena back to the kernel (glibc's `malloc_trim(0)`).
    ///
    /// glibc only shrinks the top of the main heap by itself. The free space between live blocks, and all of it in
    /// the per-thread arenas (up to 8 per core), stays with the process: under the server's mixed soak, RSS net of
    /// the result memory cache went 67 → 115 MiB in five minutes. The call takes each arena's lock in turn while it
    /// walks that arena's free lists, so it suits a timer (`ImageServerService.freeMemoryReleaseInterval`), not
    /// every request.
    ///
    /// - Returns: Whether any memory went back; false also when the allocator is not glibc's.
    @discardableResult
    public static func releaseFreeMemory() -> Bool {
        guard let symbol = glibcFunction("malloc_trim") else { return false }
        typealias MallocTrim = @convention(c) (Int) -> Int32
        return unsafeBitCast(symbol, to: MallocTrim.self)(0) == 1
    }

    /// An allocator that can answer `malloc` in a process.
    public enum Allocator: String, Sendable {
        /// glibc's malloc.
        case glibc
        /// jemalloc (the `magpie` executable links it).
        case jemalloc
        /// AddressSanitizer's or ThreadSanitizer's runtime.
        case sanitizer
        /// Another platform's.
        case other
    }

    /// Which allocator answers `malloc` in this process. Looked up once: it is fixed when the process starts, and the
    /// memory-release timer asks on every tick.
    public static let activeAllocator: Allocator = {
        #if canImport(Glibc)
        let everywhere = UnsafeMutableRawPointer(bitPattern: 0)
        if dlsym(everywhere, "__sanitizer_get_heap_size") != nil { return .sanitizer }
        if dlsym(everywhere, "mallctl") != nil { return .jemalloc }
        return .glibc
        #else
        return .other
        #endif
    }()

    /// glibc's allocator function `name`, or nil when another allocator answers (jemalloc, a sanitizer's, another
    /// libc): glibc's functions are still there then, acting on a heap nothing allocates from.
    private static func glibcFunction(_ name: String) -> UnsafeMutableRawPointer? {
        #if canImport(Glibc)
        guard activeAllocator == .glibc else { return nil }
        // Swift's Glibc module does not import <malloc.h>; the symbols are looked up instead.
        return dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)
        #else
        return nil
        #endif
    }
}
