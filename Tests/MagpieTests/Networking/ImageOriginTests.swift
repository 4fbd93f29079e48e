import AsyncHTTPClient
import MagpieOrigin
import NIOCore
import Testing

/// Pins every route of the local test origin with a real HTTP client, so the downloader tests can trust it.
@Suite struct ImageOriginTests {
    /// 3000 bytes that start like a PNG.
    static let small: [UInt8] =
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (8..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    /// 200 000 bytes: more than a socket buffer, to check truncation delivers exactly what was written.
    static let large: [UInt8] = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }

    static let assets: [String: OriginAsset] = [
        "a.png": OriginAsset(bytes: small, contentType: "image/png", maxAge: 60),
        "large.bin": OriginAsset(bytes: large, contentType: "application/octet-stream"),
    ]

    // MARK: /img

    @Test func servesAssetWithTypeLengthValidatorsAndMaxAge() async throws {
        try await withOrigin { origin in
            let result = try await fetch(origin.url("/img/a.png"))
            #expect(result.status == 200)
            expectBody(result.body, Self.small)
            #expect(result.headers["content-type"] == "image/png")
            #expect(result.headers["content-length"] == "3000")
            #expect(result.headers["etag"] == OriginAsset.strongETag(for: Self.small))
            #expect(result.headers["last-modified"] == OriginAsset.defaultLastModified)
            #expect(result.headers["cache-control"] == "max-age=60")
            #expect(origin.requestCount(path: "/img/a.png") == 1)
            #expect(origin.totalRequests == 1)
            #expect(origin.bodyBytesSent == 3000)
        }
    }

    @Test func unknownAssetAndUnknownPathAre404WithHTMLAndStillCounted() async throws {
        try await withOrigin { origin in
            let missing = try await fetch(origin.url("/img/nope.png"))
            #expect(missing.status == 404)
            #expect(missing.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(String(decoding: missing.body, as: UTF8.self).contains("<html>"))
            let unknown = try await fetch(origin.url("/nothing/here"))
            #expect(unknown.status == 404)
            #expect(unknown.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(origin.requestCount(path: "/img/nope.png") == 1)
            #expect(origin.requestCount(path: "/nothing/here") == 1)
            #expect(origin.totalRequests == 2)
        }
    }

    // MARK: Revalidation

    @Test func notModifiedWhenETagMatchesSendsNoBody() async throws {
        try await withOrigin { origin in
            let etag = OriginAsset.strongETag(for: Self.small)
            let result = try await fetch(origin.url("/img/a.png"), headers: [("If-None-Match", etag)])
            #expect(result.status == 304)
            #expect(result.body.isEmpty)
            #expect(result.headers["etag"] == etag)
            #expect(result.headers["cache-control"] == "max-age=60")
            #expect(origin.bodyBytesSent == 0)
            #expect(origin.requestCount(path: "/img/a.png") == 1)
        }
    }

    @Test func notModifiedForStarWeakTagAndTagLists() async throws {
        try await withOrigin { origin in
            let etag = OriginAsset.strongETag(for: Self.small)
            for value in ["*", "W/\(etag)", "\"other\", \(etag)"] {
                let result = try await fetch(origin.url("/img/a.png"), headers: [("If-None-Match", value)])
                #expect(result.status == 304, "If-None-Match: \(value)")
            }
            #expect(origin.bodyBytesSent == 0)
        }
    }

    @Test func differentETagGetsFullResponseEvenIfDateMatches() async throws {
        try await withOrigin { origin in
            let result = try await fetch(
                origin.url("/img/a.png"),
                headers: [("If-None-Match", "\"other\""), ("If-Modified-Since", OriginAsset.defaultLastModified)]
            )
            #expect(result.status == 200)
            #expect(result.body.count == 3000)
        }
    }

    @Test func notModifiedWhenIfModifiedSinceIsNotEarlier() async throws {
        try await withOrigin { origin in
            let url = origin.url("/img/a.png")
            let equal = try await fetch(url, headers: [("If-Modified-Since", OriginAsset.defaultLastModified)])
            #expect(equal.status == 304)
            let later = try await fetch(url, headers: [("If-Modified-Since", "Sat, 01 Jan 2022 00:00:00 GMT")])
            #expect(later.status == 304)
            let earlier = try await fetch(url, headers: [("If-Modified-Since", "Wed, 21 Oct 2015 07:27:59 GMT")])
            #expect(earlier.status == 200)
            #expect(origin.bodyBytesSent == 3000)
        }
    }

    @Test func setAssetChangesETagSoRevalidationGetsFullResponse() async throws {
        try await withOrigin { origin in
            let oldETag = OriginAsset.strongETag(for: Self.small)
            origin.setAsset(OriginAsset(bytes: Self.small.reversed(), contentType: "image/png"), forName: "a.png")
            let result = try await fetch(origin.url("/img/a.png"), headers: [("If-None-Match", oldETag)])
            #expect(result.status == 200)
            expectBody(result.body, Self.small.reversed())
            #expect(result.headers["etag"] != oldETag)
        }
    }

    // MARK: Slow, stall, truncate, length, huge

    @Test func slowDeliversAllBytesInSeveralChunks() async throws {
        try await withOrigin { origin in
            let started = ContinuousClock.now
            let result = try await fetch(origin.url("/slow/a.png?chunk=1000&delay=30"))
            // Two 30 ms pauses between three chunks; the client may coalesce chunks under load, so
            // the pauses are checked through the elapsed time, which load can only lengthen.
            #expect(ContinuousClock.now - started >= .milliseconds(60))
            #expect(result.status == 200)
            #expect(result.headers["content-length"] == "3000")
            expectBody(result.body, Self.small)
            #expect(result.chunks >= 1)
            #expect(result.error == nil)
            #expect(origin.requestCount(path: "/slow/a.png") == 1)
        }
    }

    @Test func stallSendsAfterBytesThenNothingUntilClientGivesUp() async throws {
        // Long enough for the head to arrive while ~100 other network tests start at once on 2 cores
        // (2 s was seen to be too short); the stall itself is what ends the read.
        try await withClient(.init(timeout: .init(read: .seconds(5)))) { client in
            try await withOrigin { origin in
                let start = ContinuousClock.now
                let result = try await fetch(origin.url("/stall/a.png?after=100"), client: client)
                #expect(result.status == 200)
                #expect(result.headers["content-length"] == "3000")
                expectBody(result.body, Array(Self.small[0..<100]))
                #expect(result.error != nil)
                #expect(ContinuousClock.now - start < .seconds(15))
                // The client closed its connection; the origin notices and ends the stalled response.
                #expect(await eventually { origin.activeStreams == 0 })
            }
        }
    }

    @Test func stopEndsStalledResponsesPromptly() async throws {
        let origin = try await ImageOrigin.start(assets: Self.assets)
        let reader = Task { try await fetch(origin.url("/stall/a.png?after=10")) }
        #expect(await eventually { origin.activeStreams == 1 })
        let stopDuration = await ContinuousClock().measure { await origin.stop() }
        // Generous: the point is "not the 10 s graceful-shutdown wait", on a loaded 2-core machine.
        #expect(stopDuration < .seconds(5))
        let result = try await reader.value
        #expect(result.error != nil)
        // At most the 10 bytes sent: AsyncHTTPClient may drop body parts it had not handed out when the connection
        // closes.
        #expect(result.body.count <= 10)
    }

    @Test func truncateDeclaresFullLengthSendsNBytesAndCloses() async throws {
        try await withOrigin { origin in
            let result = try await fetch(origin.url("/truncate/a.png?bytes=1234"))
            #expect(result.status == 200)
            #expect(result.headers["content-length"] == "3000")
            expectBody(result.body, Array(Self.small[0..<1234]))
            #expect(result.error != nil)
            #expect(origin.bodyBytesSent == 1234)
        }
    }

    @Test func truncateOfLargeAssetWritesExactlyNBytesBeforeClosing() async throws {
        try await withOrigin { origin in
            let result = try await fetch(origin.url("/truncate/large.bin?bytes=150000"))
            #expect(result.headers["content-length"] == "200000")
            #expect(result.error != nil)
            // The origin wrote exactly N bytes (curl receives all of them). AsyncHTTPClient drops body parts it
            // buffered but had not handed out when the connection fails, so the client may see fewer.
            #expect(origin.bodyBytesSent == 150_000)
            #expect(result.body.count <= 150_000)
            expectBody(result.body, Self.large.prefix(result.body.count))
        }
    }

    @Test func overdeclaredLengthSendsWholeAssetThenCloses() async throws {
        try await withOrigin { origin in
            let result = try await fetch(origin.url("/length/a.png?declared=5000"))
            #expect(result.headers["content-length"] == "5000")
            expectBody(result.body, Self.small)
            #expect(result.error != nil)
        }
    }

    @Test func hugeStreamsChunkedPNGLookingBytes() async throws {
        try await withOrigin { origin in
            let total = 1_000_003
            let result = try await fetch(origin.url("/huge?bytes=\(total)"))
            #expect(result.status == 200)
            #expect(result.headers["content-length"] == nil)
            #expect(result.headers["transfer-encoding"] == "chunked")
            #expect(result.body.count == total)
            #expect(Array(result.body.prefix(8)) == Array(Self.small.prefix(8)))
            #expect(result.error == nil)
            #expect(origin.bodyBytesSent == total)
        }
    }

    @Test func hugeDeclaresContentLengthWhenAsked() async throws {
        try await withOrigin { origin in
            let result = try await fetch(origin.url("/huge?bytes=300000&length=1"))
            #expect(result.headers["content-length"] == "300000")
            #expect(result.body.count == 300_000)
            #expect(result.error == nil)
        }
    }

    // MARK: Types, HTML, status codes, flaky

    @Test func typeRouteOverridesContentType() async throws {
        try await withOrigin { origin in
            let result = try await fetch(origin.url("/type/a.png?type=text%2Fhtml"))
            #expect(result.headers["content-type"] == "text/html")
            expectBody(result.body, Self.small)
        }
    }

    @Test func htmlRouteServesAnHTMLPage() async throws {
        try await withOrigin { origin in
            let result = try await fetch(origin.url("/html"))
            #expect(result.status == 200)
            #expect(result.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(String(decoding: result.body, as: UTF8.self).contains("<html>"))
        }
    }

    @Test func statusRouteSendsCodeAndRetryAfter() async throws {
        try await withOrigin { origin in
            let unavailable = try await fetch(origin.url("/status/503?retryAfter=7"))
            #expect(unavailable.status == 503)
            #expect(unavailable.headers["retry-after"] == "7")
            #expect(unavailable.headers["content-type"]?.hasPrefix("text/html") == true)
            let tooMany = try await fetch(origin.url("/status/429"))
            #expect(tooMany.status == 429)
            #expect(tooMany.headers["retry-after"] == nil)
            #expect(try await fetch(origin.url("/status/500")).status == 500)
            let noContent = try await fetch(origin.url("/status/204"))
            #expect(noContent.status == 204)
            #expect(noContent.body.isEmpty)
            #expect(origin.requestCount(path: "/status/503") == 1)
        }
    }

    @Test func flakyFailsNTimesPerURLThenServes() async throws {
        try await withOrigin { origin in
            let url = origin.url("/flaky/a.png?failures=2&code=503&retryAfter=1")
            let first = try await fetch(url)
            #expect(first.status == 503)
            #expect(first.headers["retry-after"] == "1")
            #expect(try await fetch(url).status == 503)
            let third = try await fetch(url)
            #expect(third.status == 200)
            expectBody(third.body, Self.small)
            // Another query is another URL with its own failure count.
            #expect(try await fetch(origin.url("/flaky/a.png?failures=1&code=500")).status == 500)
            #expect(origin.requestCount(path: "/flaky/a.png") == 4)
            origin.resetCounters()
            #expect(try await fetch(url).status == 503)
        }
    }

    // MARK: Redirects

    @Test func redirectsAlternateRelativeAndAbsoluteLocations() async throws {
        try await withClient(.init(redirectConfiguration: .disallow)) { client in
            try await withOrigin { origin in
                let odd = try await fetch(origin.url("/redirect/3/a.png"), client: client)
                #expect(odd.status == 302)
                #expect(odd.headers["location"] == "/redirect/2/a.png")
                let even = try await fetch(origin.url("/redirect/2/a.png?status=301"), client: client)
                #expect(even.status == 301)
                #expect(even.headers["location"] == origin.url("/redirect/1/a.png?status=301"))
                #expect(try await fetch(origin.url("/redirect/1/a.png?status=307"), client: client).status == 307)
                #expect(try await fetch(origin.url("/redirect/1/a.png?status=308"), client: client).status == 308)
                let last = try await fetch(origin.url("/redirect/0/a.png"), client: client)
                #expect(last.status == 200)
                expectBody(last.body, Self.small)
            }
        }
    }

    @Test func followingRedirectChainEndsAtAsset() async throws {
        try await withOrigin { origin in
            let result = try await fetch(origin.url("/redirect/3/a.png?status=307"))
            #expect(result.status == 200)
            expectBody(result.body, Self.small)
            for hop in 0...3 {
                #expect(origin.requestCount(path: "/redirect/\(hop)/a.png") == 1)
            }
        }
    }

    @Test func loopRedirectsBetweenAAndBForever() async throws {
        try await withClient(.init(redirectConfiguration: .disallow)) { client in
            try await withOrigin { origin in
                let a = try await fetch(origin.url("/loop/a"), client: client)
                #expect(a.status == 302)
                #expect(a.headers["location"] == "/loop/b")
                let b = try await fetch(origin.url("/loop/b"), client: client)
                #expect(b.headers["location"] == origin.url("/loop/a"))
                // A following client gives up instead of hanging.
                await #expect(throws: (any Error).self) { try await fetch(origin.url("/loop/a")) }
            }
        }
    }

    // MARK: Echo and counters

    @Test func echoRecordsLowercasedRequestHeaders() async throws {
        try await withOrigin { origin in
            let result = try await fetch(
                origin.url("/echo/a.png?x=1"),
                headers: [("Authorization", "Bearer token"), ("X-Magpie-Test", "one"), ("X-Magpie-Test", "two")]
            )
            #expect(result.status == 200)
            expectBody(result.body, Self.small)
            let headers = origin.lastRequestHeaders(path: "/echo/a.png")
            #expect(headers["authorization"] == "Bearer token")
            #expect(headers["x-magpie-test"] == "one, two")
            #expect(headers["host"]?.hasPrefix("127.0.0.1") == true)
            #expect(origin.lastRequestHeaders(path: "/echo/other.png").isEmpty)
        }
    }

    @Test func resetCountersZeroesCountsBytesAndHeaders() async throws {
        try await withOrigin { origin in
            _ = try await fetch(origin.url("/img/a.png"))
            _ = try await fetch(origin.url("/echo/a.png"))
            #expect(origin.totalRequests == 2)
            origin.resetCounters()
            #expect(origin.totalRequests == 0)
            #expect(origin.bodyBytesSent == 0)
            #expect(origin.requestCount(path: "/img/a.png") == 0)
            #expect(origin.lastRequestHeaders(path: "/echo/a.png").isEmpty)
            #expect(origin.baseURL == "http://127.0.0.1:\(origin.port)")
            #expect(origin.url("img/a.png") == origin.url("/img/a.png"))
        }
    }

    @Test func stopReturnsPromptlyWhileClientHoldsIdleConnection() async throws {
        let origin = try await ImageOrigin.start(assets: Self.assets)
        _ = try await fetch(origin.url("/img/a.png"))  // leaves a keep-alive connection in the shared client's pool
        let stopDuration = await ContinuousClock().measure { await origin.stop() }
        // Generous: the point is "not the 10 s graceful-shutdown wait", on a loaded 2-core machine.
        #expect(stopDuration < .seconds(5))
        await origin.stop()  // a second stop is harmless
    }

    // MARK: Helpers

    /// What a client saw: status, lowercased headers, the body bytes received, how many chunks, and the error that
    /// ended the body early, if any.
    struct Fetched {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var chunks: Int
        var error: (any Error)?
    }

    /// Runs `body` with a client of its own configuration and always shuts the client down.
    private func withClient(
        _ configuration: HTTPClient.Configuration,
        _ body: (HTTPClient) async throws -> Void
    ) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await body(client)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// Runs `body` against a fresh origin and always stops it.
    private func withOrigin(_ body: (ImageOrigin) async throws -> Void) async throws {
        let origin = try await ImageOrigin.start(assets: Self.assets)
        do {
            try await body(origin)
        } catch {
            await origin.stop()
            throw error
        }
        await origin.stop()
    }
}

/// Fetches `url` and reads the whole body, recording (not throwing) an error that cuts the body short.
private func fetch(
    _ url: String,
    headers: [(String, String)] = [],
    client: HTTPClient = .shared
) async throws -> ImageOriginTests.Fetched {
    var request = HTTPClientRequest(url: url)
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    // A deadline against a hung origin, not a speed check: the whole redirect chain shares it, and a fresh-clone
    // run on two loaded cores once took over 5 s for four loopback hops.
    let response = try await client.execute(request, timeout: .seconds(30))
    var received = ImageOriginTests.Fetched(
        status: Int(response.status.code),
        headers: Dictionary(
            response.headers.map { ($0.name.lowercased(), $0.value) },
            uniquingKeysWith: { "\($0), \($1)" }
        ),
        body: [],
        chunks: 0
    )
    do {
        for try await buffer in response.body {
            received.body.append(contentsOf: buffer.readableBytesView)
            received.chunks += 1
        }
    } catch {
        received.error = error
    }
    return received
}

/// Records an issue naming the sizes and the first differing offset, instead of printing both byte arrays.
private func expectBody(
    _ actual: [UInt8],
    _ expected: some Collection<UInt8>,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let expected = Array(expected)
    guard actual != expected else { return }
    let firstDifference = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(actual.count, expected.count)
    Issue.record(
        "body differs: got \(actual.count) bytes, expected \(expected.count); first difference at \(firstDifference)",
        sourceLocation: sourceLocation
    )
}

/// Polls `condition` every 10 ms for up to `seconds`; true as soon as it holds.
private func eventually(within seconds: Double = 5, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

