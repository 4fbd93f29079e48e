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
/// ``value(for:parse:)`` keeps every text it parses; a caller that knows better which texts come again (the server
/// keeps a path once its result is served from a cache, so cold traffic's one-off paths never fill it) uses
/// ``knownValue(for:)`` and ``remember(_:for:)`` instead.
final class ParseMemo<Value: Sendable>: Sendable {
    /// Boxed, so that the map's empty buckets cost a pointer each rather than a whole value (a parsed request is
    /// 880 bytes inline).
    private final class Entry: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let capacity: Int
    private let maximumTextBytes: Int

    /// - Parameters:
    ///   - capacity: The most texts kept; 0 keeps none.
    ///   - maximumTextBytes: The longest text kept, in UTF-8 bytes.
    init(capacity: Int, maximumTextBytes: Int = .max) {
        self.capacity = max(0, capacity)
        self.maximumTextBytes = maximumTextBytes
    }

    /// The value parsed earlier from `text`, or `parse(text)` (kept when it succeeds and is short enough).
    func value<Failure: Error>(for text: String, parse: (String) throws(Failure) -> Value) throws(Failure) -> Value {
        if let known = knownValue(for: text) { return known }
        let parsed = try parse(text)
        remember(parsed, for: text)
        return parsed
    }

    /// The value kept for `text`, if any; never parses.
    func knownValue(for text: String) -> Value? {
        guard capacity > 0, text.utf8.count <= maximumTextBytes else { return nil }
        return entries.withLock { $0[text] }?.value
    }

    /// Keeps `value` as what `text` parses to (unless the memo keeps nothing, `text` is too long or already kept).
    func remember(_ value: Value, for text: String) {
        guard capacity > 0, text.utf8.count <= maximumTextBytes else { return }
        entries.withLock { entries in
            guard entries[text] == nil else { return }
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[text] = Entry(value)
        }
    }
}
