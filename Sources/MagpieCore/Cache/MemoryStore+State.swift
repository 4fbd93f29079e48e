#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: - LRU lists

extension MemoryStore {
    /// One slot of the node array. Free slots have an empty key and no value.
    @usableFromInline
    struct Node {
        @usableFromInline var key: String
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        @usableFromInline var expiration: StorageExpiration
        /// Seconds since the reference date; plain doubles keep the hot path free of Date calls.
        @usableFromInline var expiresAt: Double
        @usableFromInline var previous: Int
        @usableFromInline var next: Int
        /// In the probation segment (only ever true in a segmented store).
        @usableFromInline var onProbation: Bool
    }

    /// One recency list threaded through the node array by index, head = most recently used.
    @usableFromInline
    struct Segment {
        @usableFromInline var head = State.none
        @usableFromInline var tail = State.none
        @usableFromInline var cost = 0
    }

    /// The cache proper: a dictionary from key to slot, and two doubly linked lists threaded through `nodes`
    /// (protected, and probation for a segmented store; a plain LRU uses only the first). Freed slots are chained
    /// through `next` and reused.
    @usableFromInline
    struct State {
        @inlinable static var none: Int { -1 }

        @usableFromInline var config: MemoryStoreConfig
        @usableFromInline var index: [String: Int] = [:]
        @usableFromInline var nodes: [Node] = []
        @usableFromInline var protected = Segment()
        @usableFromInline var probation = Segment()
        @usableFromInline var freeList = State.none
        @usableFromInline var count = 0
        @usableFromInline var statistics = MemoryStoreStatistics()
        /// No entry expires before this (a lower bound: removals and extensions only move expiries later).
        @usableFromInline var earliestExpiry = Double.infinity
        /// Inserts since the last full expiry pass; bounds how often eviction pays for one.
        @usableFromInline var insertsSincePurge = 0

        @inlinable var totalCost: Int { protected.cost + probation.cost }

        @usableFromInline
        mutating func insert(
            key: String, value: Value, cost: Int, expiration: StorageExpiration, expiresAt: Double, onProbation: Bool
        ) -> Value? {
            insertsSincePurge &+= 1
            earliestExpiry = min(earliestExpiry, expiresAt)
            if let slot = index[key] {
                unlink(slot)
                let old = nodes[slot].value
                nodes[slot].value = value
                nodes[slot].cost = cost
                nodes[slot].expiration = expiration
                nodes[slot].expiresAt = expiresAt
                linkAtHead(slot, onProbation: onProbation)
                return old
            }
            let node = Node(
                key: key, value: value, cost: cost, expiration: expiration, expiresAt: expiresAt,
                previous: State.none, next: State.none, onProbation: onProbation)
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
            linkAtHead(slot, onProbation: onProbation)
            count += 1
            return nil
        }

        /// The hit, and separately the values removed on the way (an expired entry, or entries a promotion out
        /// of probation pushed out), to be freed outside the lock.
        @inlinable
        mutating func value(
            forKey key: String, now: Double, extending: ExpirationExtending
        ) -> (hit: Value?, released: [Value]) {
            guard let slot = index[key] else {
                statistics.misses += 1
                return (nil, [])
            }
            guard nodes[slot].expiresAt > now else {
                statistics.misses += 1
                statistics.expirations += 1
                return (nil, unlinkAndFree(slot).map { [$0] } ?? [])
            }
            switch extending {
            case .none:
                break
            case .cacheTime:
                extend(slot, to: nodes[slot].expiration, now: now)
            case .expirationTime(let expiration):
                extend(slot, to: expiration, now: now)
            }
            statistics.hits += 1
            guard nodes[slot].onProbation else {
                moveToHead(slot)
                return (nodes[slot].value, [])
            }
            // A second use: protected from now on, which may push protected entries back onto probation.
            unlink(slot)
            linkAtHead(slot, onProbation: false)
            return (nodes[slot].value, evict(now: now))
        }

        @inlinable
        mutating func extend(_ slot: Int, to expiration: StorageExpiration, now: Double) {
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

        @usableFromInline
        mutating func remove(key: String) -> Value? {
            guard let slot = index[key] else { return nil }
            return unlinkAndFree(slot)
        }

        /// Evicts until every limit of the configuration holds. Expired entries go first, when one may exist and
        /// enough inserts have passed since the last full pass to keep the pass's cost amortised O(1). In a
        /// segmented store, protected entries past their share move back to probation first; evictions always
        /// take probation's oldest before the protected segment's.
        @usableFromInline
        mutating func evict(now: Double) -> [Value] {
            let costLimit = config.totalCostLimit, countLimit = max(config.countLimit, 0)
            let probationLimit = config.probationCostLimit
            if probationLimit > 0 {
                while protected.cost > costLimit - probationLimit, protected.tail != State.none {
                    let slot = protected.tail
                    unlink(slot)
                    linkAtHead(slot, onProbation: true)
                }
            }
            guard totalCost > costLimit || count > countLimit || (probationLimit > 0 && probation.cost > probationLimit) else {
                return []
            }
            var released: [Value] = []
            if now >= earliestExpiry, insertsSincePurge >= count / 8 {
                released = removeExpired(now: now)
            }
            while totalCost > costLimit || count > countLimit || (probationLimit > 0 && probation.cost > probationLimit) {
                let slot = probation.tail != State.none ? probation.tail : protected.tail
                guard slot != State.none else { break }
                if nodes[slot].expiresAt <= now {
                    statistics.expirations += 1
                } else if count > countLimit && totalCost <= costLimit {
                    statistics.countEvictions += 1
                } else {
                    statistics.costEvictions += 1
                }
                if let value = unlinkAndFree(slot) { released.append(value) }
            }
            return released
        }

        @usableFromInline
        mutating func removeExpired(now: Double) -> [Value] {
            var released: [Value] = []
            var earliest = Double.infinity
            for tail in [protected.tail, probation.tail] {
                var slot = tail
                while slot != State.none {
                    let previous = nodes[slot].previous
                    if nodes[slot].expiresAt <= now {
                        if let value = unlinkAndFree(slot) { released.append(value) }
                    } else {
                        earliest = min(earliest, nodes[slot].expiresAt)
                    }
                    slot = previous
                }
            }
            statistics.expirations += released.count
            earliestExpiry = earliest
            insertsSincePurge = 0
            return released
        }

        /// Empties the storage, handing the old nodes back so they are freed after the lock is released.
        @usableFromInline
        mutating func takeAll() -> (nodes: [Node], index: [String: Int]) {
            var old = State(config: config)
            old.statistics = statistics
            swap(&old, &self)
            return (old.nodes, old.index)
        }

        @usableFromInline
        mutating func unlinkAndFree(_ slot: Int) -> Value? {
            unlink(slot)
            index.removeValue(forKey: nodes[slot].key)
            count -= 1
            let value = nodes[slot].value
            nodes[slot].value = nil
            nodes[slot].key = ""
            nodes[slot].next = freeList
            freeList = slot
            return value
        }

        @inlinable
        mutating func moveToHead(_ slot: Int) {
            let onProbation = nodes[slot].onProbation
            guard (onProbation ? probation.head : protected.head) != slot else { return }
            unlink(slot)
            linkAtHead(slot, onProbation: onProbation)
        }

        @inlinable
        mutating func linkAtHead(_ slot: Int, onProbation: Bool) {
            nodes[slot].onProbation = onProbation
            if onProbation {
                Self.link(slot, atHeadOf: &probation, in: &nodes)
            } else {
                Self.link(slot, atHeadOf: &protected, in: &nodes)
            }
        }

        @inlinable
        mutating func unlink(_ slot: Int) {
            if nodes[slot].onProbation {
                Self.unlink(slot, from: &probation, in: &nodes)
            } else {
                Self.unlink(slot, from: &protected, in: &nodes)
            }
        }

        @inlinable
        static func link(_ slot: Int, atHeadOf segment: inout Segment, in nodes: inout [Node]) {
            nodes[slot].previous = State.none
            nodes[slot].next = segment.head
            if segment.head != State.none { nodes[segment.head].previous = slot }
            segment.head = slot
            if segment.tail == State.none { segment.tail = slot }
            segment.cost += nodes[slot].cost
        }

        @inlinable
        static func unlink(_ slot: Int, from segment: inout Segment, in nodes: inout [Node]) {
            let previous = nodes[slot].previous, next = nodes[slot].next
            if previous != State.none { nodes[previous].next = next } else { segment.head = next }
            if next != State.none { nodes[next].previous = previous } else { segment.tail = previous }
            nodes[slot].previous = State.none
            nodes[slot].next = State.none
            segment.cost -= nodes[slot].cost
        }
    }
}
