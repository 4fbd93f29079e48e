import Foundation
import MagpieServer
import Testing

@testable import MagpieCore

/// Memory hits answered on the event loop (`MemoryHitHandler`) look exactly like the router's answers, keep
/// pipelined responses in order, and leave connection handling (close, HEAD) as it was.
@Suite("MemoryHitHandler", .serialized)
struct MemoryHitHandlerTests {
    private func request(_ path: String, method: String = "GET", extra: String = "") -> String {
        "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)\r\n"
    }

    private func size(_ body: Data) throws -> PixelSize {
        try ImageCoderRegistry.shared.decode(body).pixelSize
    }

    @Test func aMemoryHitHasTheRoutersStatusHeadersAndBody() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "webp")
            let made = try await fixture.request(path)
            let hit = try await fixture.request(path)
            #expect(made.header("X-Magpie-Cache") != "memory")
            #expect(hit.header("X-Magpie-Cache") == "memory")
            #expect(hit.status == made.status)
            #expect(hit.body == made.body)
            for name in ["Content-Type", "Content-Length", "Cache-Control", "ETag", "Last-Modified", "Server"] {
                #expect(hit.header(name) != nil, "\(name)")
                #expect(hit.header(name) == made.header(name), "\(name)")
            }
            #expect(hit.header("Date").flatMap(HTTPDate.parse) != nil)
            let names = { (answer: ServerFixture.Answer) in Set(answer.headers.map { $0.name.lowercased() }) }
            #expect(names(hit) == names(made))
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrderWhenAMissIsAheadOfAHit() async throws {
        try await ServerFixture.with { fixture in
            let hit = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "png")
            let miss = fixture.imagePath("photo.jpg", options: ["resize:24x18:fit"], extension: "png")
            _ = try await fixture.request(hit)
            let exchange = try await RawHTTPConnection.exchange(
                port: fixture.port, requests: request(miss) + request(hit) + request("/health") + request(miss),
                bodyless: [false, false, false, false])
            let answers = exchange.responses
            #expect(answers.map(\.status) == [200, 200, 200, 200])
            // Each body is the one its own request gets alone (and the two results differ in size).
            let alone = (miss: try await fixture.request(miss).body, hit: try await fixture.request(hit).body)
            #expect(try size(alone.miss) != size(alone.hit))
            #expect(answers[0].body == alone.miss)
            #expect(answers[1].body == alone.hit)
            #expect(answers[3].body == alone.miss)
            #expect(answers[0].header("x-magpie-cache") != "memory")
            #expect(answers[2].body == Data("ok\n".utf8))
            #expect(answers[3].header("x-magpie-cache") == "memory")
            #expect(!exchange.closed)
        }
    }

    @Test func aHeadMemoryHitSaysTheLengthAndSendsNoBody() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "png")
            let get = try await fixture.request(path)
            // A body after the HEAD answer would be read as the next response's status line and fail the parse.
            let exchange = try await RawHTTPConnection.exchange(
                port: fixture.port, requests: request(path, method: "HEAD") + request(path), bodyless: [true, false])
            #expect(exchange.responses[0].status == 200)
            #expect(exchange.responses[0].header("x-magpie-cache") == "memory")
            #expect(exchange.responses[0].header("content-length") == String(get.body.count))
            #expect(exchange.responses[1].body == get.body)
        }
    }

    @Test func aMemoryHitAskingConnectionCloseIsAnsweredAndTheConnectionClosed() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "png")
            let get = try await fixture.request(path)
            let exchange = try await RawHTTPConnection.exchange(
                port: fixture.port, requests: request(path, extra: "Connection: close\r\n"), bodyless: [false])
            #expect(exchange.responses.first?.body == get.body)
            #expect(exchange.closed)
        }
    }

    @Test func aMemoryHitWithABodyDoesNotLeaveTheBodyToBeReadAsTheNextRequest() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "png")
            _ = try await fixture.request(path)
            let body = "GET /health HTTP/1.1\r\n\r\n"
            let exchange = try await RawHTTPConnection.exchange(
                port: fixture.port,
                requests: request(path, extra: "Content-Length: \(body.utf8.count)\r\n") + body + request(path),
                bodyless: [false, false])
            #expect(exchange.responses.map(\.status) == [200, 200])
            #expect(exchange.responses.allSatisfy { $0.header("x-magpie-cache") == "memory" })
        }
    }

    @Test func aQueryOrAKeepAliveHeaderStillGetsTheMemoryHit() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "png")
            let get = try await fixture.request(path)
            let exchange = try await RawHTTPConnection.exchange(
                port: fixture.port, requests: request(path + "?v=2") + request(path, extra: "Connection: keep-alive\r\n"),
                bodyless: [false, false])
            #expect(exchange.responses.map { $0.header("x-magpie-cache") } == ["memory", "memory"])
            #expect(exchange.responses.allSatisfy { $0.body == get.body })
            #expect(!exchange.closed)
        }
    }
}
