import Synchronization

/// Requests already verified and parsed, by their exact path. A path's signature, options and source never change
/// meaning while the server runs (the keys are fixed at start), so a repeated path skips the HMAC and both parsers:
/// on the cached path they were a quarter of the CPU per request.
///
/// Only requests that parsed are kept (a flood of bad paths cannot fill it), and the map is emptied when full
/// rather than ordered: a cheap bound, and what stays hot is parsed again on its next request.
final class ParsedRequestCache: Sendable {
    private let entries = Mutex<[String: ServeRequest]>([:])
    private let capacity: Int

    /// - Parameter capacity: The most paths kept; 0 keeps none.
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The request parsed earlier from `path`, or `parse(path)` (kept when it succeeds).
    func request(
        forPath path: String, parse: (String) throws(ServeRequestError) -> ServeRequest
    ) throws(ServeRequestError) -> ServeRequest {
        if let known = entries.withLock({ $0[path] }) { return known }
        let parsed = try parse(path)
        guard capacity > 0 else { return parsed }
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[path] = parsed
        }
        return parsed
    }
}
