#if MAGPIE_TSAN_LOCKS
@testable import Magpie
@testable import MagpieCore

/// In ThreadSanitizer builds the tests' own locks are Magpie's pthread-based one too (see
/// `Sources/MagpieCore/General/SanitizerMutex.swift`); a declaration here wins over both imports.
typealias Mutex = MagpieCore.Mutex
#endif
