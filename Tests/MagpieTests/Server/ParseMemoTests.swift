import Synchronization
import Testing

@testable import MagpieServer

/// The server's memo of parsed texts (request paths, Accept headers): a repeat skips the parse, failures are never
/// kept, the size is bounded.
struct ParseMemoTests {
    /// Parses unsigned paths and counts the calls.
    final class CountingParser: Sendable {
        let calls = Mutex(0)

        func parse(_ path: String) throws(ServeRequestError) -> ServeRequest {
            calls.withLock { $0 += 1 }
            return try ServeRequest.parse(path: path, signer: ImageURLSigner(keys: []), allowsUnsigned: true, presets: [:])
        }
    }

    static func path(_ number: Int) -> String {
        "/_/resize:\(number)x\(number):fit/plain/https%3A%2F%2Fimages.example%2Fa.jpg"
    }

    @Test func aRepeatedPathIsParsedOnce() throws {
        let cache = ParseMemo<ServeRequest>(capacity: 8)
        let parser = CountingParser()
        let first = try cache.value(for: Self.path(10), parse: parser.parse)
        let again = try cache.value(for: Self.path(10), parse: parser.parse)
        #expect(parser.calls.withLock { $0 } == 1)
        #expect(first.options.normalized == again.options.normalized)
        _ = try cache.value(for: Self.path(11), parse: parser.parse)
        #expect(parser.calls.withLock { $0 } == 2, "another path is parsed")
    }

    @Test func aPathThatFailsIsParsedAgainEachTime() {
        let cache = ParseMemo<ServeRequest>(capacity: 8)
        let parser = CountingParser()
        for _ in 0..<2 {
            #expect(throws: ServeRequestError.self) {
                try cache.value(for: "/_/nonsense:1/plain/https%3A%2F%2Fimages.example%2Fa.jpg", parse: parser.parse)
            }
        }
        #expect(parser.calls.withLock { $0 } == 2)
    }

    @Test func aFullCacheStartsOverInsteadOfGrowing() throws {
        let cache = ParseMemo<ServeRequest>(capacity: 3)
        let parser = CountingParser()
        for number in 1...3 { _ = try cache.value(for: Self.path(number), parse: parser.parse) }
        _ = try cache.value(for: Self.path(1), parse: parser.parse)
        #expect(parser.calls.withLock { $0 } == 3, "all three are kept while there is room")
        _ = try cache.value(for: Self.path(4), parse: parser.parse)  // full: emptied, then 4 kept
        _ = try cache.value(for: Self.path(1), parse: parser.parse)
        #expect(parser.calls.withLock { $0 } == 5, "the fourth path emptied the cache, so the first is parsed again")
    }

    @Test func withSecondSightingAPathIsKeptOnlyWhenItComesAgain() throws {
        let cache = ParseMemo<ServeRequest>(capacity: 8, keepsFromSecondSighting: true)
        let parser = CountingParser()
        for _ in 0..<4 { _ = try cache.value(for: Self.path(10), parse: parser.parse) }
        #expect(parser.calls.withLock { $0 } == 2, "parsed on the first and second sighting, kept from the second")
    }

    @Test func withSecondSightingPathsSeenOnceNeverEmptyTheKeptOnes() throws {
        let cache = ParseMemo<ServeRequest>(capacity: 8, keepsFromSecondSighting: true)
        let parser = CountingParser()
        for _ in 0..<2 { _ = try cache.value(for: Self.path(1), parse: parser.parse) }
        for number in 100..<200 { _ = try cache.value(for: Self.path(number), parse: parser.parse) }  // cold traffic
        let before = parser.calls.withLock { $0 }
        _ = try cache.value(for: Self.path(1), parse: parser.parse)
        #expect(parser.calls.withLock { $0 } == before, "a hundred paths seen once did not push out the repeated one")
    }
}
