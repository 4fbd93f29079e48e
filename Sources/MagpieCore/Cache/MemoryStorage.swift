#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// An in-memory cache of decoded images, keyed by string, with true LRU eviction by cost and count.
///
/// Every operation is O(1) apart from ``removeExpired()``, ``removeAll()`` and ``keys``. Entries expire
/// by ``Config/expiration`` (or a per-entry override); an expired entry is a miss and is removed
/// when read. A background sweep removes expired entries every ``Config/cleanInterval`` seconds;
/// it holds the storage weakly and stops when the storage is released.
///
/// All state sits behind one `Mutex`, so the storage may be used from any number of tasks.
public final class MemoryStorage: Sendable {
    /// Limits and timing of a ``MemoryStorage``.
    public struct Config: Sendable {
        /// Most bytes of pixels held at once (``Image/cost`` summed). Default ``defaultTotalCostLimit``: 25 % of
        /// min(physical memory, cgroup v2 `memory.max`), at most 512 MiB.
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

        /// A configuration with the given values; each parameter sets the property of the same name.
        ///
        /// - Parameters:
        ///   - totalCostLimit: Most bytes of pixels held.
        ///   - countLimit: Most entries held.
        ///   - expiration: Default lifetime of an entry (300 s).
        ///   - accessExtending: What a read does to the expiry.
        ///   - cleanInterval: Seconds between background sweeps (120; 0 or less: none).
        ///   - clock: The source of "now".
        public init(
            totalCostLimit: Int = Config.defaultTotalCostLimit,
            countLimit: Int = .max,
            expiration: StorageExpiration = .seconds(300),
            accessExtending: ExpirationExtending = .cacheTime,
            cleanInterval: TimeInterval = 120,
            clock: CacheClock = .system
        ) {
            self.totalCostLimit = totalCostLimit
            self.countLimit = countLimit
            self.expiration = expiration
            self.accessExtending = accessExtending
            self.cleanInterval = cleanInterval
            self.clock = clock
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

    /// Counters since creation (or the last ``resetStatistics()``).
    public struct Statistics: Sendable, Equatable {
        /// Reads that returned an image.
        public var hits = 0
        /// Reads that found nothing, or only an expired entry.
        public var misses = 0
        /// Entries evicted because the total cost went over ``Config/totalCostLimit``.
        public var costEvictions = 0
        /// Entries evicted because the count went over ``Config/countLimit``.
        public var countEvictions = 0
        /// Entries removed because they had expired (on read, by ``removeExpired()`` or by the sweep).
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

    /// The configuration: set it on a live storage to change the limits, the expiry or the clock (as
    /// `cache.memoryStorage.config.totalCostLimit = …` in Kingfisher). Lower limits evict at once; a changed
    /// ``Config/cleanInterval`` restarts the background sweep.
    public var config: Config {
        get { state.withLock { $0.config } }
        set {
            let (evicted, oldInterval) = state.withLock { state -> ([Image], TimeInterval) in
                let oldInterval = state.config.cleanInterval
                state.config = newValue
                let now = newValue.clock.now().timeIntervalSinceReferenceDate
                guard state.totalCost > newValue.totalCostLimit || state.count > max(newValue.countLimit, 0) else {
                    return ([], oldInterval)
                }
                return (state.evict(costLimit: newValue.totalCostLimit, countLimit: max(newValue.countLimit, 0), now: now), oldInterval)
            }
            _ = evicted  // freed here, outside the lock
            if newValue.cleanInterval != oldInterval { restartSweeper(interval: newValue.cleanInterval) }
        }
    }

    private let state: Mutex<State>
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    /// Creates an empty storage; starts the background sweep when `config.cleanInterval` is positive.
    ///
    /// - Parameter config: Limits, expiry and clock; defaults to
    ///   ``Config/init(totalCostLimit:countLimit:expiration:accessExtending:cleanInterval:clock:)``
    ///   with its defaults.
    public init(config: Config = Config()) {
        self.state = Mutex(State(config: config))
        if config.cleanInterval > 0 { startSweeper(interval: config.cleanInterval) }
    }

    deinit {
        sweeper.withLock { $0?.cancel() }
    }

    // MARK: Writing

    /// Stores `image` under `key`, replacing any previous value, and evicts least recently used
    /// entries (expired ones first) until both limits hold.
    ///
    /// Nothing is stored, and an older value for `key` is removed, when `cost` (default
    /// `image.cost`) alone exceeds ``Config/totalCostLimit``, when ``Config/countLimit`` is below 1, or when the
    /// expiration (default `config.expiration`) is already over; ``Statistics/rejections`` counts these.
    ///
    /// - Parameters:
    ///   - image: The image to hold.
    ///   - key: The key to store it under.
    ///   - cost: What the entry counts against the cost limit, in bytes; nil (the default) for ``Image/cost``.
    ///   - expiration: The entry's lifetime; nil (the default) for ``Config/expiration``.
    public func store(_ image: Image, forKey key: String, cost: Int? = nil, expiration: StorageExpiration? = nil) {
        let cost = max(cost ?? image.cost, 0)
        // Replaced and evicted images leave the critical section as the result and are
        // discarded after the unlock, so freeing their pixels never happens under the lock.
        _ = state.withLock { state -> (replaced: Image?, evicted: [Image]) in
            let config = state.config
            let expiration = expiration ?? config.expiration
            let now = config.clock.now().timeIntervalSinceReferenceDate
            let expiresAt = expiration.estimatedExpiration(since: Date(timeIntervalSinceReferenceDate: now))
                .timeIntervalSinceReferenceDate
            let costLimit = config.totalCostLimit, countLimit = config.countLimit
            guard !expiration.isExpired, expiresAt > now, cost <= costLimit, countLimit >= 1 else {
                state.statistics.rejections += 1
                return (state.remove(key: key), [])
            }
            let replaced = state.insert(
                key: key, image: image, cost: cost, expiration: expiration, expiresAt: expiresAt)
            guard state.totalCost > costLimit || state.count > countLimit else { return (replaced, []) }
            return (replaced, state.evict(costLimit: costLimit, countLimit: countLimit, now: now))
        }
    }

    /// Removes the value for `key`, if any (not counted in the statistics).
    ///
    /// - Parameter key: The exact key the image was stored under.
    public func remove(forKey key: String) {
        _ = state.withLock { $0.remove(key: key) }
    }

    /// Removes every entry. Statistics are kept.
    public func removeAll() {
        _ = state.withLock { $0.takeAll() }
    }

    /// Removes every expired entry now (the background sweep does the same periodically).
    ///
    /// - Returns: How many entries were removed.
    @discardableResult
    public func removeExpired() -> Int {
        let removed = state.withLock { $0.removeExpired(now: $0.config.clock.now().timeIntervalSinceReferenceDate) }
        return removed.count
    }

    // MARK: Reading

    /// The image for `key`, or nil when there is none or it has expired (an expired entry is removed).
    ///
    /// A hit makes the entry the most recently used and applies `extendingExpiration`
    /// (nil: `config.accessExtending`) to its expiry. Hits and misses are counted in ``statistics``.
    ///
    /// - Parameters:
    ///   - key: The key the image was stored under.
    ///   - extendingExpiration: What this read does to the entry's expiry; nil (the default) for
    ///     ``Config/accessExtending``.
    public func value(forKey key: String, extendingExpiration: ExpirationExtending? = nil) -> Image? {
        state.withLock { state in
            let now = state.config.clock.now().timeIntervalSinceReferenceDate
            return state.value(forKey: key, now: now, extending: extendingExpiration ?? state.config.accessExtending)
        }.hit
    }

    /// True when `key` holds an unexpired entry. Neither the LRU order, the expiry nor the statistics change.
    ///
    /// - Parameter key: The key the image was stored under.
    public func isCached(forKey key: String) -> Bool {
        state.withLock { state in
            guard let index = state.index[key] else { return false }
            return state.nodes[index].expiresAt > state.config.clock.now().timeIntervalSinceReferenceDate
        }
    }

    /// Number of entries held (expired ones not yet removed included).
    public var count: Int { state.withLock { $0.count } }

    /// Sum of the costs of the entries held, in bytes (expired ones not yet removed included).
    public var totalCost: Int { state.withLock { $0.totalCost } }

    /// The keys held, most recently used first.
    public var keys: [String] {
        state.withLock { state in
            var keys: [String] = []
            keys.reserveCapacity(state.count)
            var index = state.head
            while index != State.none {
                keys.append(state.nodes[index].key)
                index = state.nodes[index].next
            }
            return keys
        }
    }

    /// A snapshot of the counters since creation or the last ``resetStatistics()``.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Sets every counter to zero.
    public func resetStatistics() {
        state.withLock { $0.statistics = Statistics() }
    }

    // MARK: Sweeping

    /// The background sweep task, exposed so tests can wait for it to end.
    var sweepTask: Task<Void, Never>? { sweeper.withLock { $0 } }

    private func restartSweeper(interval: TimeInterval) {
        sweeper.withLock { $0?.cancel() }
        if interval > 0 { startSweeper(interval: interval) }
    }

    private func startSweeper(interval: TimeInterval) {
        let task = Task.detached(priority: .background) { [weak self] in
            while true {
                do {
                    try await Task.sleep(for: .seconds(interval))
                } catch {
                    return
                }
                // The strong reference lives only for the sweep, so the storage can still be freed while asleep.
                guard let storage = self else { return }
                storage.removeExpired()
            }
        }
        sweeper.withLock { $0 = task }
    }
}

// MARK: - LRU list

extension MemoryStorage {
    /// One slot of the node array. Free slots have an empty key and no image.
    struct Node {
        var key: String
        var image: Image?
        var cost: Int
        var expiration: StorageExpiration
        /// Seconds since the reference date; plain doubles keep the hot path free of Date calls.
        var expiresAt: Double
        var previous: Int
        var next: Int
    }

    /// The cache proper: a dictionary from key to slot, and a doubly linked list threaded through
    /// `nodes` by index (head = most recently used). Freed slots are chained through `next` and reused.
    struct State {
        static let none = -1

        var config: Config
        var index: [String: Int] = [:]
        var nodes: [Node] = []
        var head = State.none
        var tail = State.none
        var freeList = State.none
        var count = 0
        var totalCost = 0
        var statistics = Statistics()
        /// No entry expires before this (a lower bound: removals and extensions only move expiries later).
        var earliestExpiry = Double.infinity
        /// Inserts since the last full expiry pass; bounds how often eviction pays for one.
        var insertsSincePurge = 0

        mutating func insert(
            key: String, image: Image, cost: Int, expiration: StorageExpiration, expiresAt: Double
        ) -> Image? {
            insertsSincePurge &+= 1
            earliestExpiry = min(earliestExpiry, expiresAt)
            if let slot = index[key] {
                totalCost += cost - nodes[slot].cost
                let old = nodes[slot].image
                nodes[slot].image = image
                nodes[slot].cost = cost
                nodes[slot].expiration = expiration
                nodes[slot].expiresAt = expiresAt
                moveToHead(slot)
                return old
            }
            let node = Node(
                key: key, image: image, cost: cost, expiration: expiration, expiresAt: expiresAt,
                previous: State.none, next: State.none)
            let slot: Int
            if freeList != State.none {
                slot = freeList
                freeList = nodes[slot].next
                nodes[slot] = node
            } else {
                slot = nodes.count
                nodes.append(node)
            }
            index[key] = slot
            linkAtHead(slot)
            count += 1
            totalCost += cost
            return nil
        }

        /// The hit, and separately an expired image removed on the way (to be freed outside the lock).
        mutating func value(
            forKey key: String, now: Double, extending: ExpirationExtending
        ) -> (hit: Image?, expired: Image?) {
            guard let slot = index[key] else {
                statistics.misses += 1
                return (nil, nil)
            }
            guard nodes[slot].expiresAt > now else {
                statistics.misses += 1
                statistics.expirations += 1
                return (nil, unlinkAndFree(slot))
            }
            switch extending {
            case .none:
                break
            case .cacheTime:
                extend(slot, to: nodes[slot].expiration, now: now)
            case .expirationTime(let expiration):
                extend(slot, to: expiration, now: now)
            }
            moveToHead(slot)
            statistics.hits += 1
            return (nodes[slot].image, nil)
        }

        private mutating func extend(_ slot: Int, to expiration: StorageExpiration, now: Double) {
            let expiresAt: Double
            switch expiration {
            // The common cases skip building Dates; the rest defer to StorageExpiration's own rule.
            case .seconds(let seconds): expiresAt = now + seconds
            case .never: expiresAt = Date.distantFuture.timeIntervalSinceReferenceDate
            default:
                expiresAt = expiration.estimatedExpiration(since: Date(timeIntervalSinceReferenceDate: now))
                    .timeIntervalSinceReferenceDate
            }
            nodes[slot].expiresAt = expiresAt
            earliestExpiry = min(earliestExpiry, expiresAt)
        }

        mutating func remove(key: String) -> Image? {
            guard let slot = index[key] else { return nil }
            return unlinkAndFree(slot)
        }

        /// Evicts until both limits hold. Expired entries go first, when one may exist and enough
        /// inserts have passed since the last full pass to keep the pass's cost amortised O(1).
        mutating func evict(costLimit: Int, countLimit: Int, now: Double) -> [Image] {
            var released: [Image] = []
            if now >= earliestExpiry, insertsSincePurge >= count / 8 {
                released = removeExpired(now: now)
            }
            while (totalCost > costLimit || count > countLimit), tail != State.none {
                let slot = tail
                if nodes[slot].expiresAt <= now {
                    statistics.expirations += 1
                } else if totalCost > costLimit {
                    statistics.costEvictions += 1
                } else {
                    statistics.countEvictions += 1
                }
                if let image = unlinkAndFree(slot) { released.append(image) }
            }
            return released
        }

        mutating func removeExpired(now: Double) -> [Image] {
            var released: [Image] = []
            var earliest = Double.infinity
            var slot = tail
            while slot != State.none {
                let previous = nodes[slot].previous
                if nodes[slot].expiresAt <= now {
                    if let image = unlinkAndFree(slot) { released.append(image) }
                } else {
                    earliest = min(earliest, nodes[slot].expiresAt)
                }
                slot = previous
            }
            statistics.expirations += released.count
            earliestExpiry = earliest
            insertsSincePurge = 0
            return released
        }

        /// Empties the storage, handing the old nodes back so they are freed after the lock is released.
        mutating func takeAll() -> (nodes: [Node], index: [String: Int]) {
            var old = State(config: config)
            old.statistics = statistics
            swap(&old, &self)
            return (old.nodes, old.index)
        }

        private mutating func unlinkAndFree(_ slot: Int) -> Image? {
            unlink(slot)
            index.removeValue(forKey: nodes[slot].key)
            count -= 1
            totalCost -= nodes[slot].cost
            let image = nodes[slot].image
            nodes[slot].image = nil
            nodes[slot].key = ""
            nodes[slot].next = freeList
            freeList = slot
            return image
        }

        private mutating func moveToHead(_ slot: Int) {
            guard head != slot else { return }
            unlink(slot)
            linkAtHead(slot)
        }

        private mutating func linkAtHead(_ slot: Int) {
            nodes[slot].previous = State.none
            nodes[slot].next = head
            if head != State.none { nodes[head].previous = slot }
            head = slot
            if tail == State.none { tail = slot }
        }

        private mutating func unlink(_ slot: Int) {
            let previous = nodes[slot].previous, next = nodes[slot].next
            if previous != State.none { nodes[previous].next = next } else { head = next }
            if next != State.none { nodes[next].previous = previous } else { tail = previous }
            nodes[slot].previous = State.none
            nodes[slot].next = State.none
        }
    }
}
