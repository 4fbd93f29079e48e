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

    @Test func knownValueNeverParsesAndRememberKeepsWhatItIsGiven() throws {
        let cache = ParseMemo<ServeRequest>(capacity: 8)
        let parser = CountingParser()
        #expect(cache.knownValue(for: Self.path(10)) == nil)
        let parsed = try parser.parse(Self.path(10))
        cache.remember(parsed, for: Self.path(10))
        #expect(cache.knownValue(for: Self.path(10))?.options.normalized == parsed.options.normalized)
        _ = try cache.value(for: Self.path(10), parse: parser.parse)
        #expect(parser.calls.withLock { $0 } == 1, "value(for:) found the remembered one")
    }

    @Test func rememberKeepsNothingTooLongOrWithNoCapacity() throws {
        let parsed = try CountingParser().parse(Self.path(10))
        let short = ParseMemo<ServeRequest>(capacity: 8, maximumTextBytes: 16)
        short.remember(parsed, for: Self.path(10))
        #expect(short.knownValue(for: Self.path(10)) == nil)
        let none = ParseMemo<ServeRequest>(capacity: 0)
        none.remember(parsed, for: Self.path(10))
        #expect(none.knownValue(for: Self.path(10)) == nil)
    }

    @Test func theServerKeepsAPathOnlyOnceACacheHasAnsweredIt() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "png")
            let made = try await fixture.request(path)
            #expect(made.status == 200)
            #expect(fixture.server.parsedRequests.knownValue(for: path) == nil, "a path answered by a new result is not kept")
            let hit = try await fixture.request(path)
            #expect(hit.header("X-Magpie-Cache") == "memory")
            #expect(fixture.server.parsedRequests.knownValue(for: path) != nil, "a path a cache answered is kept")
        }
    }
}
