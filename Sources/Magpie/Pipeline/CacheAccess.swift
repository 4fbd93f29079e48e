/// Which cache layers one retrieval reads and writes (Nuke's per-request cache options). Give it with
/// ``MagpieOption/cacheAccess(_:)`` or change one layer with ``MagpieOption/memoryCacheReads(_:)`` and its siblings.
///
/// A prefetch that should not push displayed images out of memory drops ``memoryWrites``; a batch job that reads
/// through a shared disk cache without growing it drops ``diskWrites``.
public struct CacheAccess: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: UInt8

    /// A set from raw bits.
    ///
    /// - Parameter rawValue: The bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Look in the memory cache.
    public static let memoryReads = CacheAccess(rawValue: 1 << 0)
    /// Store results (and images read from disk) in the memory cache.
    public static let memoryWrites = CacheAccess(rawValue: 1 << 1)
    /// Look in the data (disk) cache, including its HTTP metadata for revalidation.
    public static let diskReads = CacheAccess(rawValue: 1 << 2)
    /// Store results in the data cache (and record revalidations there).
    public static let diskWrites = CacheAccess(rawValue: 1 << 3)

    /// Every layer, both ways: the default.
    public static let all: CacheAccess = [.memoryReads, .memoryWrites, .diskReads, .diskWrites]
    /// No cache at all: every retrieval loads.
    public static let none: CacheAccess = []
}

extension CacheAccess {
    /// Adds `member` when `on`, removes it otherwise.
    mutating func set(_ member: CacheAccess, _ on: Bool) {
        if on { insert(member) } else { remove(member) }
    }
}
