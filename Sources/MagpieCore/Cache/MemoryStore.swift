#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The decoded images' memory store: Kingfisher's `MemoryStorage`, the built-in ``MemoryCaching``.
public typealias MemoryStorage = MemoryStore<Image>

/// An in-memory cache of values keyed by string, with LRU eviction by cost and count: decoded images in the
/// pipeline (``MemoryStorage``), encoded results in `magpie serve`.
///
/// Every operation is O(1) apart from ``removeExpired()``, ``removeAll()`` and ``keys``. Entries expire
/// by ``Config/expiration`` (or a per-entry override); an expired entry is a miss and is removed
/// when read. A background sweep removes expired entries every ``Config/cleanInterval`` seconds;
/// it holds the storage weakly and stops when the storage is released. With ``Config/probationFraction`` above
/// zero it is a segmented LRU (new entries on probation until read; see ``MemoryAdmission``).
///
/// All state sits behind one `Mutex`, so the storage may be used from any number of tasks.
public final class MemoryStore<Value: CacheCostCalculable>: Sendable {
    /// Limits and timing of a store.
    public typealias Config = MemoryStoreConfig
    /// Counters since creation (or the last ``resetStatistics()``).
    public typealias Statistics = MemoryStoreStatistics

    /// The configuration: set it on a live storage to change the limits, the expiry or the clock (as
    /// `cache.memoryStorage.config.totalCostLimit = …` in Kingfisher). Lower limits evict at once; a changed
    /// ``Config/cleanInterval`` restarts the background sweep.
    public var config: Config {
        get { state.withLock { $0.config } }
        set {
            let (evicted, oldInterval) = state.withLock { state -> ([Value], TimeInterval) in
                let oldInterval = state.config.cleanInterval
                state.config = newValue
                let now = newValue.clock.now().timeIntervalSinceReferenceDate
                return (state.evict(now: now), oldInterval)
            }
            _ = evicted  // freed here, outside the lock
            if newValue.cleanInterval != oldInterval { restartSweeper(interval: newValue.cleanInterval) }
        }
    }

    @usableFromInline let state: Mutex<State>
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    /// Creates an empty storage; starts the background sweep when `config.cleanInterval` is positive.
    ///
    /// - Parameter config: Limits, expiry and clock; defaults to
    ///   ``MemoryStoreConfig/init(totalCostLimit:countLimit:expiration:accessExtending:cleanInterval:clock:probationFraction:maximumEntryCost:)``
    ///   with its defaults.
    public init(config: Config = Config()) {
        self.state = Mutex(State(config: config))
        if config.cleanInterval > 0 { startSweeper(interval: config.cleanInterval) }
    }

    deinit {
        sweeper.withLock { $0?.cancel() }
    }

    // MARK: Writing

    /// Stores `value` under `key`, replacing any previous value, and evicts least recently used
    /// entries (expired ones first) until every limit holds.
    ///
    /// Nothing is stored, and an older value for `key` is removed, when `cost` (default `value.cacheCost`) alone
    /// exceeds ``Config/totalCostLimit`` or ``Config/maximumEntryCost`` (or, on probation, probation's share), when
    /// ``Config/countLimit`` is below 1, or when the expiration (default `config.expiration`) is already over;
    /// ``Statistics/rejections`` counts these.
    ///
    /// - Parameters:
    ///   - value: The value to hold.
    ///   - key: The key to store it under.
    ///   - cost: What the entry counts against the cost limit; nil (the default) for ``CacheCostCalculable/cacheCost``.
    ///   - expiration: The entry's lifetime; nil (the default) for ``Config/expiration``.
    ///   - admission: Which segment of a segmented store it enters; ``MemoryAdmission/probation`` by default.
    public func store(
        _ value: Value, forKey key: String, cost: Int? = nil, expiration: StorageExpiration? = nil,
        admission: MemoryAdmission = .probation
    ) {
        let cost = max(cost ?? value.cacheCost, 0)
        // Replaced and evicted values leave the critical section as the result and are
        // discarded after the unlock, so freeing them never happens under the lock.
        _ = state.withLock { state -> (replaced: Value?, evicted: [Value]) in
            let config = state.config
            let expiration = expiration ?? config.expiration
            let now = config.clock.now().timeIntervalSinceReferenceDate
            let expiresAt = expiration.estimatedExpiration(since: Date(timeIntervalSinceReferenceDate: now))
                .timeIntervalSinceReferenceDate
            let probationLimit = config.probationCostLimit
            let onProbation = probationLimit > 0 && admission == .probation
            let costLimit = min(config.totalCostLimit, config.maximumEntryCost, onProbation ? probationLimit : .max)
            guard !expiration.isExpired, expiresAt > now, cost <= costLimit, config.countLimit >= 1 else {
                state.statistics.rejections += 1
                return (state.remove(key: key), [])
            }
            let replaced = state.insert(
                key: key, value: value, cost: cost, expiration: expiration, expiresAt: expiresAt,
                onProbation: onProbation)
            return (replaced, state.evict(now: now))
        }
    }

    /// Removes the value for `key`, if any (not counted in the statistics).
    ///
    /// - Parameter key: The exact key the value was stored under.
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

    /// The value for `key`, or nil when there is none or it has expired (an expired entry is removed).
    ///
    /// A hit makes the entry the most recently used (and protected, in a segmented store) and applies
    /// `extendingExpiration` (nil: `config.accessExtending`) to its expiry. Hits and misses are counted in
    /// ``statistics``.
    ///
    /// - Parameters:
    ///   - key: The key the value was stored under.
    ///   - extendingExpiration: What this read does to the entry's expiry; nil (the default) for
    ///     ``Config/accessExtending``.
    @inlinable
    public func value(forKey key: String, extendingExpiration: ExpirationExtending? = nil) -> Value? {
        state.withLock { state in
            let now = state.config.clock.now().timeIntervalSinceReferenceDate
            return state.value(forKey: key, now: now, extending: extendingExpiration ?? state.config.accessExtending)
        }.hit
    }

    /// True when `key` holds an unexpired entry. Neither the LRU order, the expiry nor the statistics change.
    ///
    /// - Parameter key: The key the value was stored under.
    @inlinable
    public func isCached(forKey key: String) -> Bool {
        state.withLock { state in
            guard let index = state.index[key] else { return false }
            return state.nodes[index].expiresAt > state.config.clock.now().timeIntervalSinceReferenceDate
        }
    }

    /// Number of entries held (expired ones not yet removed included).
    public var count: Int { state.withLock { $0.count } }

    /// Sum of the costs of the entries held (expired ones not yet removed included).
    public var totalCost: Int { state.withLock { $0.protected.cost + $0.probation.cost } }

    /// Sum of the costs of the entries on probation (always 0 in a plain LRU store).
    public var probationCost: Int { state.withLock { $0.probation.cost } }

    /// The keys held, most recently used first (in a segmented store, the protected ones before those on probation).
    public var keys: [String] {
        state.withLock { state in
            var keys: [String] = []
            keys.reserveCapacity(state.count)
            for segment in [state.protected, state.probation] {
                var index = segment.head
                while index != State.none {
                    keys.append(state.nodes[index].key)
                    index = state.nodes[index].next
                }
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
