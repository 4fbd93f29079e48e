import Magpie
import Synchronization

/// Encoded results in memory, least recently used first out, bounded by their total size in bytes. The server's
/// first layer: a hit is answered without touching the disk, a worker or the pipeline.
final class ResultMemoryCache: Sendable {
    private final class Node: @unchecked Sendable {
        // Only touched under `state`'s lock.
        let key: String
        let value: ServedImage
        var newer: Node?
        var older: Node?

        init(key: String, value: ServedImage) {
            self.key = key
            self.value = value
        }
    }

    private struct State: ~Copyable {
        var nodes: [String: Node] = [:]
        var newest: Node?
        var oldest: Node?
        var totalBytes = 0

        mutating func unlink(_ node: Node) {
            if let newer = node.newer { newer.older = node.older } else { newest = node.older }
            if let older = node.older { older.newer = node.newer } else { oldest = node.newer }
            node.newer = nil
            node.older = nil
        }

        mutating func pushNewest(_ node: Node) {
            node.older = newest
            newest?.newer = node
            newest = node
            if oldest == nil { oldest = node }
        }
    }

    let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: The most bytes of results kept; a single result larger than a quarter of it is not kept.
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    func value(forKey key: String) -> ServedImage? {
        state.withLock { state in
            guard let node = state.nodes[key] else { return nil }
            state.unlink(node)
            state.pushNewest(node)
            return node.value
        }
    }

    func store(_ value: ServedImage, forKey key: String) {
        let size = value.data.count
        guard size <= capacity / 4 else { return }
        state.withLock { state in
            if let old = state.nodes.removeValue(forKey: key) {
                state.unlink(old)
                state.totalBytes -= old.value.data.count
            }
            let node = Node(key: key, value: value)
            state.nodes[key] = node
            state.pushNewest(node)
            state.totalBytes += size
            while state.totalBytes > capacity, let oldest = state.oldest {
                state.unlink(oldest)
                state.nodes.removeValue(forKey: oldest.key)
                state.totalBytes -= oldest.value.data.count
            }
        }
    }

    /// Results held now, and their bytes.
    var usage: (count: Int, bytes: Int) { state.withLock { ($0.nodes.count, $0.totalBytes) } }
}
