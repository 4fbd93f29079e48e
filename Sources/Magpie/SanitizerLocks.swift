#if MAGPIE_TSAN_LOCKS
import MagpieCore

/// Only in ThreadSanitizer builds: this module's locks are MagpieCore's pthread-based `Mutex` too (see
/// `Sources/MagpieCore/General/SanitizerMutex.swift`); a declaration here wins over the imported `Synchronization.Mutex`.
package typealias Mutex = MagpieCore.Mutex
#endif
