#if canImport(Glibc)
import Glibc
#endif

/// How the process's allocator returns memory, for a long-running image server.
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
    /// (a sanitizer's, another libc).
    ///
    /// - Returns: Whether the threshold was fixed.
    @discardableResult
    public static func returnLargeBlocksToTheSystem(threshold: Int = defaultThreshold) -> Bool {
        #if canImport(Glibc)
        guard getenv("MALLOC_MMAP_THRESHOLD_") == nil, threshold > 0, threshold <= Int(Int32.max) else { return false }
        // A sanitizer's allocator answers mallopt without using the threshold; its runtime exports this query.
        guard dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__sanitizer_get_heap_size") == nil else { return false }
        // Swift's Glibc module does not import <malloc.h>; the symbol is looked up instead. M_MMAP_THRESHOLD is -3.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        return mallopt(-3, Int32(threshold)) == 1
        #else
        return false
        #endif
    }
}
