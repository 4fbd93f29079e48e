import Dispatch
import Synchronization

/// Focal regions already found, by the digest of the detector's input, and the detections under way: a second size
/// of the same photo, or a second request while the first still detects, never runs the detector again. Bounded:
/// past `capacity` entries the oldest goes. A detection that outlives its caller's budget still lands here.
final class FocalRegionCache: Sendable {
    /// One detection under way; callers wait for it with their own time limit.
    final class Flight: Sendable {
        fileprivate let group = DispatchGroup()
        fileprivate let outcome = Mutex<Result<[FocalRegion], any Error>?>(nil)

        fileprivate init() { group.enter() }

        /// The detection's answer, or nil when it did not come within `timeout`.
        func wait(timeout: Duration) -> Result<[FocalRegion], any Error>? {
            let nanoseconds = Int(min(max(timeout / .nanoseconds(1), 0), 1e15))
            guard group.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return nil }
            return outcome.withLock { $0 }
        }
    }

    /// What a lookup found.
    enum Lookup {
        /// Regions found before.
        case found([FocalRegion])
        /// Another caller's detection of the same input, under way.
        case underWay(Flight)
        /// Nothing yet: this caller detects, then calls ``finish(_:flight:with:)``.
        case detect(Flight)
        /// Too many detections under way already (`maximumFlights`): none is started.
        case busy
    }

    private struct State {
        var entries: [String: [FocalRegion]] = [:]
        var order: [String] = []
        var oldest = 0
        var flights: [String: Flight] = [:]
    }

    let capacity: Int
    let maximumFlights: Int
    private let state = Mutex(State())

    /// A cache of `capacity` inputs' answers, allowing `maximumFlights` detections at once.
    init(capacity: Int, maximumFlights: Int) {
        self.capacity = max(capacity, 0)
        self.maximumFlights = max(maximumFlights, 1)
    }

    /// The regions stored for `key`, the detection under way for it, or the flight this caller must run.
    func lookup(_ key: String) -> Lookup {
        state.withLock { state in
            if let regions = state.entries[key] { return .found(regions) }
            if let flight = state.flights[key] { return .underWay(flight) }
            guard state.flights.count < maximumFlights else { return .busy }
            let flight = Flight()
            state.flights[key] = flight
            return .detect(flight)
        }
    }

    /// Ends `flight`: a success is stored for `key` (a failure is not, so a later request tries again), and every
    /// waiter wakes.
    func finish(_ key: String, flight: Flight, with outcome: Result<[FocalRegion], any Error>) {
        flight.outcome.withLock { $0 = outcome }
        state.withLock { state in
            state.flights[key] = nil
            guard capacity > 0, case .success(let regions) = outcome, state.entries[key] == nil else { return }
            if state.order.count < capacity {
                state.order.append(key)
            } else {
                // A ring over insertion order: the slot of the oldest key takes the new one.
                state.entries[state.order[state.oldest]] = nil
                state.order[state.oldest] = key
                state.oldest = (state.oldest + 1) % capacity
            }
            state.entries[key] = regions
        }
        flight.group.leave()
    }

    /// How many answers are stored.
    var count: Int { state.withLock { $0.entries.count } }
}
