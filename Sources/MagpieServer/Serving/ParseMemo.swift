import Synchronization

/// Results of parsing text that means the same every time (a request path, whose signature, options and source
/// never change meaning while the server runs; an `Accept` header's negotiation class), by the exact text. A repeat
/// skips the parse: on the cached path, the HMAC, both parsers and the result key's text were most of Magpie's own
/// work per request.
///
/// Only values that parsed are kept (a flood of bad paths cannot fill it), and the map is emptied when full rather
/// than ordered: a cheap bound, and what stays hot is parsed again on its next request. Texts longer than
/// `maximumTextBytes` are parsed every time: clients choose them, and the memo must stay within capacity × that.
///
/// With `keepsFromSecondSighting`, a text is kept only when it comes again while its hash is still remembered: cold
/// traffic (every path new, seen once) then fills a set of hashes instead of the memo. A full memo of request paths
/// was 10 of magpie serve's 17 MiB of live heap after three minutes of cold requests (jemalloc's heap profile).
final class ParseMemo<Value: Sendable>: Sendable {
    /// Boxed, so that the map's empty buckets cost a pointer each rather than a whole parsed request.
    private final class Entry: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Hashes of texts parsed once and not kept yet (with `keepsFromSecondSighting`).
        var sightings: Set<Int> = []
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let maximumTextBytes: Int
    private let keepsFromSecondSighting: Bool

    /// - Parameters:
    ///   - capacity: The most texts kept; 0 keeps none.
    ///   - maximumTextBytes: The longest text kept, in UTF-8 bytes.
    ///   - keepsFromSecondSighting: Keep a text only from its second parse (at most `capacity` hashes remembered).
    init(capacity: Int, maximumTextBytes: Int = .max, keepsFromSecondSighting: Bool = false) {
        self.capacity = max(0, capacity)
        self.maximumTextBytes = maximumTextBytes
        self.keepsFromSecondSighting = keepsFromSecondSighting
    }

    /// The value parsed earlier from `text`, or `parse(text)` (kept when it succeeds and is short enough).
    func value<Failure: Error>(for text: String, parse: (String) throws(Failure) -> Value) throws(Failure) -> Value {
        guard capacity > 0, text.utf8.count <= maximumTextBytes else { return try parse(text) }
        if let known = state.withLock({ $0.entries[text] }) { return known.value }
        let parsed = try parse(text)
        state.withLock { state in
            if keepsFromSecondSighting {
                let hash = text.hashValue
                guard state.sightings.remove(hash) != nil else {
                    if state.sightings.count >= capacity { state.sightings.removeAll(keepingCapacity: true) }
                    state.sightings.insert(hash)
                    return
                }
            }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[text] = Entry(parsed)
        }
        return parsed
    }
}
