import Magpie
import Synchronization

/// Encoded results in memory, bounded by their total size in bytes: the server's first layer, where a hit is
/// answered without touching the disk, a worker or the pipeline.
///
/// A segmented LRU. A result just produced enters a small probation segment (an eighth of the capacity); only a
/// second request for it, or a result read back from the disk cache (asked for before), earns a place in the
/// protected rest. Behind a CDN most results are asked for once: without the split they would push out the ones
/// asked for again and again, and a cold load would fill the whole capacity with results never read back
/// (measured: 128 MiB of them after a minute of cold requests, two thirds of the server's RSS).
final class ResultMemoryCache: Sendable {
    /// Where a result is stored.
    enum Admission {
        /// Just produced: probation, until asked for again.
        case fresh
        /// Asked for before (read back from the disk cache): protected at once.
        case repeated
    }

    private final class Node: @unchecked Sendable {
        // Only touched under `state`'s lock.
        let key: String
        let value: ServedImage
        var isProtected = false
        var newer: Node?
        var older: Node?

        init(key: String, value: ServedImage) {
            self.key = key
            self.value = value
        }

        var size: Int { value.data.count }
    }

    /// One recency list, newest first out of `oldest`'s side.
    private struct Segment: ~Copyable {
        var newest: Node?
        var oldest: Node?
        var bytes = 0

        mutating func unlink(_ node: Node) {
            if let newer = node.newer { newer.older = node.older } else { newest = node.older }
            if let older = node.older { older.newer = node.newer } else { oldest = node.newer }
            node.newer = nil
            node.older = nil
            bytes -= node.size
        }

        mutating func pushNewest(_ node: Node) {
            node.older = newest
            newest?.newer = node
            newest = node
            if oldest == nil { oldest = node }
            bytes += node.size
        }
    }

    private struct State: ~Copyable {
        var nodes: [String: Node] = [:]
        var probation = Segment()
        var protected = Segment()

        mutating func unlink(_ node: Node) {
            if node.isProtected { protected.unlink(node) } else { probation.unlink(node) }
        }

        mutating func pushNewest(_ node: Node, protected isProtected: Bool) {
            node.isProtected = isProtected
            if isProtected { protected.pushNewest(node) } else { probation.pushNewest(node) }
        }
    }

    /// The most bytes of results kept, both segments together.
    let capacity: Int
    /// The most bytes of results on probation.
    let probationCapacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: The most bytes of results kept. A result larger than a quarter of it is not kept, nor a
    ///   fresh one larger than the probation segment (an eighth of it).
    init(capacity: Int) {
        self.capacity = max(0, capacity)
        probationCapacity = self.capacity / 8
    }

    /// The result for `key`; a result on probation is protected from now on.
    func value(forKey key: String) -> ServedImage? {
        state.withLock { state in
            guard let node = state.nodes[key] else { return nil }
            let wasOnProbation = !node.isProtected
            state.unlink(node)
            state.pushNewest(node, protected: true)
            // Only a promotion changes the segments' sizes; a protected hit just moves to the front.
            if wasOnProbation { shrink(&state) }
            return node.value
        }
    }

    func store(_ value: ServedImage, forKey key: String, admission: Admission) {
        let size = value.data.count
        let limit = admission == .fresh ? probationCapacity : capacity / 4
        guard size <= limit else { return }
        state.withLock { state in
            if let old = state.nodes.removeValue(forKey: key) { state.unlink(old) }
            let node = Node(key: key, value: value)
            state.nodes[key] = node
            state.pushNewest(node, protected: admission == .repeated)
            shrink(&state)
        }
    }

    /// Demotes the protected segment's oldest into probation while it holds more than its share, then evicts
    /// probation's oldest while the two hold more than the capacity or probation more than its own.
    private func shrink(_ state: inout State) {
        while state.protected.bytes > capacity - probationCapacity, let oldest = state.protected.oldest {
            state.protected.unlink(oldest)
            state.pushNewest(oldest, protected: false)
        }
        while state.probation.bytes > probationCapacity || state.probation.bytes + state.protected.bytes > capacity,
            let oldest = state.probation.oldest
        {
            state.probation.unlink(oldest)
            state.nodes.removeValue(forKey: oldest.key)
        }
    }

    /// Results held now, and their bytes.
    var usage: (count: Int, bytes: Int) {
        state.withLock { ($0.nodes.count, $0.probation.bytes + $0.protected.bytes) }
    }
}
