#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a value counts against a ``MemoryStore``'s cost limit (Kingfisher's `CacheCostCalculable`).
public protocol CacheCostCalculable: Sendable {
    /// The value's cost in bytes: an image's pixel bytes, an encoded result's length.
    var cacheCost: Int { get }
}

extension Image: CacheCostCalculable {
    /// ``cost``: the bytes of its pixels.
    public var cacheCost: Int { cost }
}

/// Where ``MemoryStore/store(_:forKey:cost:expiration:admission:)`` puts a new entry of a segmented store
/// (``MemoryStoreConfig/probationFraction`` above zero). A plain LRU store treats both alike.
public enum MemoryAdmission: Sendable {
    /// Not read yet: the entry waits in the probation segment until its first read protects it (the default).
    case probation
    /// Known to be wanted again (for example read back from a slower layer): protected at once.
    case protected
}

/// Limits and timing of a ``MemoryStore`` (``MemoryStorage/Config`` for images).
public struct MemoryStoreConfig: Sendable {
    /// Most cost held at once (``CacheCostCalculable/cacheCost`` summed; for images, bytes of pixels). Default
    /// ``defaultTotalCostLimit``: 25 % of min(physical memory, cgroup v2 `memory.max`), at most 512 MiB.
    public var totalCostLimit: Int
    /// Most entries held at once. Default `Int.max`.
    public var countLimit: Int
    /// How long an entry lives unless stored with its own expiration. Default 300 seconds.
    public var expiration: StorageExpiration
    /// What a read does to the entry's expiry when the caller does not say. Default
    /// ``ExpirationExtending/cacheTime``.
    public var accessExtending: ExpirationExtending
    /// Seconds between background sweeps of expired entries; zero or less disables the sweep. Default 120.
    public var cleanInterval: TimeInterval
    /// The source of "now" for expiry decisions. Default ``CacheClock/system``.
    public var clock: CacheClock
    /// The share of ``totalCostLimit`` that entries not read since they were stored may hold, 0...1. Zero (the
    /// default) is a plain LRU. Above zero the store is a segmented LRU: a new entry waits on probation and only a
    /// read protects it, so a scan of values asked for once cannot push out values asked for again and again (an
    /// image server behind a CDN sees mostly the former; it uses 1/8).
    public var probationFraction: Double
    /// The most one entry may cost; a larger one is not stored. Default `Int.max` (``totalCostLimit`` bounds it).
    public var maximumEntryCost: Int

    /// A configuration with the given values; each parameter sets the property of the same name.
    ///
    /// - Parameters:
    ///   - totalCostLimit: Most cost held.
    ///   - countLimit: Most entries held.
    ///   - expiration: Default lifetime of an entry (300 s).
    ///   - accessExtending: What a read does to the expiry.
    ///   - cleanInterval: Seconds between background sweeps (120; 0 or less: none).
    ///   - clock: The source of "now".
    ///   - probationFraction: The share of the cost limit for entries not read yet (0: plain LRU).
    ///   - maximumEntryCost: The most one entry may cost.
    public init(
        totalCostLimit: Int = MemoryStoreConfig.defaultTotalCostLimit,
        countLimit: Int = .max,
        expiration: StorageExpiration = .seconds(300),
        accessExtending: ExpirationExtending = .cacheTime,
        cleanInterval: TimeInterval = 120,
        clock: CacheClock = .system,
        probationFraction: Double = 0,
        maximumEntryCost: Int = .max
    ) {
        self.totalCostLimit = totalCostLimit
        self.countLimit = countLimit
        self.expiration = expiration
        self.accessExtending = accessExtending
        self.cleanInterval = cleanInterval
        self.clock = clock
        self.probationFraction = probationFraction
        self.maximumEntryCost = maximumEntryCost
    }

    /// The cost entries on probation may hold: ``totalCostLimit`` × ``probationFraction``; 0 for a plain LRU.
    var probationCostLimit: Int {
        guard probationFraction > 0 else { return 0 }
        return Int((Double(totalCostLimit) * min(probationFraction, 1)).rounded(.down))
    }

    /// 25 % of the memory this process may use (min(physical memory, cgroup v2 `memory.max`)), at most
    /// ``defaultTotalCostCap`` (512 MiB): a server that configures nothing must not end up holding gigabytes of
    /// decoded pixels. Set ``totalCostLimit`` to go higher.
    public static let defaultTotalCostLimit: Int = defaultLimit(available: availableMemory())

    /// The most the default cost limit grows to, however much memory there is: 512 MiB.
    public static let defaultTotalCostCap = 512 << 20

    /// The default limit for `available` bytes of memory: a quarter, at most ``defaultTotalCostCap``.
    static func defaultLimit(available: Int) -> Int {
        min(max(available / 4, 1), defaultTotalCostCap)
    }

    /// min(physical memory, cgroup v2 `memory.max`).
    static func availableMemory() -> Int {
        var available = physicalMemory()
        if let limit = cgroupMemoryLimit(), limit > 0 { available = min(available, limit) }
        return available
    }

    static func physicalMemory() -> Int {
        let bytes = ProcessInfo.processInfo.physicalMemory
        guard bytes > 0 else { return Int.max / 4 }
        return bytes > UInt64(Int.max) ? Int.max : Int(bytes)
    }

    /// The cgroup v2 limit, or nil when there is none ("max") or the file is absent (cgroup v1, macOS).
    static func cgroupMemoryLimit(path: String = "/sys/fs/cgroup/memory.max") -> Int? {
        guard let data = try? Data(contentsOf: URL(filePath: path)) else { return nil }
        return parseCgroupLimit(String(decoding: data, as: UTF8.self))
    }

    static func parseCgroupLimit(_ text: String) -> Int? {
        text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }
    }
}

/// Counters of a ``MemoryStore`` since creation (or the last ``MemoryStore/resetStatistics()``).
public struct MemoryStoreStatistics: Sendable, Equatable {
    /// Reads that returned a value.
    public var hits = 0
    /// Reads that found nothing, or only an expired entry.
    public var misses = 0
    /// Entries evicted because the total cost (or probation's share of it) went over its limit.
    public var costEvictions = 0
    /// Entries evicted because the count went over ``MemoryStoreConfig/countLimit``.
    public var countEvictions = 0
    /// Entries removed because they had expired (on read, by ``MemoryStore/removeExpired()`` or by the sweep).
    public var expirations = 0
    /// Stores refused because the entry alone exceeds a limit or is already expired.
    public var rejections = 0

    /// Creates zeroed counters.
    public init() {}

    /// All evictions: ``costEvictions`` + ``countEvictions`` (expirations not included).
    public var evictions: Int { costEvictions + countEvictions }
    /// ``hits`` divided by reads (hits + misses), 0...1; 0 before the first read.
    public var hitRate: Double {
        let reads = hits + misses
        return reads == 0 ? 0 : Double(hits) / Double(reads)
    }
}
