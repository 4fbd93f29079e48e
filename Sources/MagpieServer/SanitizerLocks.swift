#if MAGPIE_TSAN_LOCKS
import MagpieCore

// Only in ThreadSanitizer builds: this module's locks are MagpieCore's pthread-based `Mutex` too (see
// `Sources/MagpieCore/General/SanitizerMutex.swift`); a declaration in the module wins over the imported
// `Synchronization.Mutex` in every file, whatever each one imports.
typealias Mutex = MagpieCore.Mutex
#endif
