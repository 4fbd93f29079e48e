/// A place in a priority queue (a `Heap`'s maximum comes first): the highest priority, then the
/// earliest arrival. The download scheduler and ``BoundedExecutor`` order their waiters with it.
package struct QueueTicket<Priority: Comparable & Sendable>: Comparable, Sendable {
    /// Higher runs sooner.
    package let priority: Priority
    /// Arrival order: among equal priorities, the lower id runs sooner.
    package let id: UInt64

    package init(priority: Priority, id: UInt64) {
        self.priority = priority
        self.id = id
    }

    package static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.priority != rhs.priority ? lhs.priority < rhs.priority : lhs.id > rhs.id
    }
}
