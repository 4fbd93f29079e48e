import AsyncHTTPClient
import Foundation
import MagpieOrigin
import MagpieServer
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import MagpieCore

/// What an operator hit running `magpie serve` (wave 3's hardening issue), each pinned: path escapes from
/// `--allow-source`, results beyond a format's or the server's limits, HTTP/1.0, slow heads, other methods, option
/// floods, the drain on shutdown, aborted requests, refusal reasons, access lines and metrics.
@Suite("ImageServer hardening", .serialized)
struct ImageServerHardeningTests {
    // MARK: Path escape

    @Test(arguments: ["../photo.jpg", "%2e%2e/photo.jpg", "%2E%2E/photo.jpg", ".%2e/photo.jpg", "sub/../../photo.jpg"])
    func aDotSegmentOutOfTheAllowedPrefixIsRefusedBeforeAnyFetch(escape: String) async throws {
        try await ServerFixture.with(allowingSourcesUnder: "/img/inner/") { fixture in
            let answer = try await fixture.request(fixture.plainPath(fixture.origin.url("/img/inner/" + escape)))
            #expect(answer.status == 403, "\(escape): \(answer.status) \(answer.text)")
            #expect(answer.text == "source not allowed\n")
            #expect(fixture.origin.totalRequests == 0)
            // Without the dot segment the same file is out of bounds too: the refusal is about where it leads.
            #expect(try await fixture.request(fixture.plainPath(fixture.origin.url("/img/photo.jpg"))).status == 403)
        }
    }

    @Test(arguments: ["..%2fphoto.jpg", "..%2Fphoto.jpg", "%2e%2e%2fphoto.jpg", "..%5cphoto.jpg", "..\\photo.jpg", "a%2f..%2f..%2fphoto.jpg"])
    func aDotSegmentHiddenBehindAnEncodedSeparatorIs400(escape: String) async throws {
        try await ServerFixture.with(allowingSourcesUnder: "/img/inner/") { fixture in
            let answer = try await fixture.request(fixture.plainPath(fixture.origin.url("/img/inner/" + escape)))
            #expect(answer.status == 400, "\(escape): \(answer.status) \(answer.text)")
            #expect(answer.text.contains("dot segment"))
            #expect(fixture.origin.totalRequests == 0)
        }
    }

    @Test func dotSegmentsInsideThePrefixAreResolvedAndTheResolvedPathIsFetched() async throws {
        try await ServerFixture.with(allowingSourcesUnder: "/img/") { fixture in
            let source = fixture.origin.url("/img/sub/./../photo.jpg")
            let answer = try await fixture.request(fixture.plainPath(source, options: ["resize:8x6:fit"]))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(fixture.origin.requestCount(path: "/img/photo.jpg") == 1)
            #expect(fixture.origin.totalRequests == 1)
        }
    }

    // MARK: Result limits

    @Test(arguments: ["resize:1x49000000:none", "resize:49000000x1:none"])
    func aResultSideOverTheMaximumIs422AtOnceWhicheverSideIsLong(option: String) async throws {
        try await ServerFixture.with { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", options: [option], extension: "png"))
            #expect(answer.status == 422, "\(answer.text)")
            #expect(answer.text.contains("over the limit of 16384 pixels a side"), "\(answer.text)")
        }
    }

    @Test(arguments: [
        ("resize:1x70000:none", "jpg", "result 1x70000 exceeds JPEG's 65500 rows"),
        ("resize:20000x1:none", "webp", "result 20000x1 exceeds WebP's 16383 columns"),
    ])
    func aResultTooLargeForItsFormatIs422NamingTheLimit(option: String, ext: String, message: String) async throws {
        let log = AccessLogCapture()
        try await ServerFixture.with(configure: {
            $0.maximumResultDimension = 100_000
            $0.accessLogFormat = .json
            $0.accessLogWriter = log.writer
        }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", options: [option], extension: ext))
            #expect(answer.status == 422, "\(answer.text)")
            #expect(answer.text == message + "\n")
            #expect((log.entries.last?["reason"] as? String)?.contains("exceeds") == true)
        }
    }

    @Test func aWorkingMemoryLimitRefusesAStepBeforeItAllocates() async throws {
        try await ServerFixture.with(configure: { $0.maximumWorkingMemory = 4_000_000 }) { fixture in
            // 1200×1200 RGBA is 5.76 MB: more than the whole budget, however little scratch the resize needs.
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:1200x1200:none"]))
            #expect(answer.status == 422, "\(answer.text)")
            #expect(answer.text.contains("working memory"), "\(answer.text)")
            #expect(try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:800x800:none"])).status == 200)
        }
    }

    // MARK: HTTP

    @Test func http10WithoutKeepAliveIsClosedAfterItsResponseAndWithItStaysOpen() async throws {
        try await ServerFixture.with { fixture in
            let plain = try await RawHTTPConnection.exchange(port: fixture.port, requests: "GET /health HTTP/1.0\r\n\r\n", bodyless: [false])
            #expect(plain.responses.first?.status == 200)
            #expect(plain.responses.first?.header("connection") == "close")
            #expect(plain.closed)
            let kept = try await RawHTTPConnection.exchange(
                port: fixture.port, requests: "GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", bodyless: [false])
            #expect(kept.responses.first?.header("connection") == "keep-alive")
            #expect(!kept.closed)
            let closing = try await RawHTTPConnection.exchange(
                port: fixture.port, requests: "GET /health HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n", bodyless: [false])
            #expect(closing.closed)
            let eleven = try await RawHTTPConnection.exchange(
                port: fixture.port, requests: "GET /health HTTP/1.1\r\nHost: a\r\n\r\n", bodyless: [false])
            #expect(!eleven.closed)
            #expect(eleven.responses.first?.header("connection") == nil)
            // A memory hit is answered before Hummingbird; closing must still happen after it.
            let image = fixture.imagePath("photo.jpg", options: ["resize:8x6:fit"])
            #expect(try await fixture.request(image).status == 200)
            let hit = try await RawHTTPConnection.exchange(port: fixture.port, requests: "GET \(image) HTTP/1.0\r\n\r\n", bodyless: [false])
            #expect(hit.responses.first?.status == 200)
            #expect(hit.closed)
        }
    }

    @Test func aRequestHeadThatTricklesInIsAnswered408AndClosed() async throws {
        try await ServerFixture.with(service: { $0.headTimeout = .milliseconds(600) }) { fixture in
            let started = ContinuousClock.now
            let answer = try await RawHTTPConnection.readUntilClosed(port: fixture.port, sending: "GET /health HTTP/1.1\r\nHost: a\r\nX-Slow:")
            #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(answer)")
            #expect(ContinuousClock.now - started < .seconds(30))
            // Between requests the idle timeout rules: a kept-alive connection is not cut by the head timeout.
            let idle = try await RawHTTPConnection.exchange(port: fixture.port, requests: "GET /health HTTP/1.1\r\nHost: a\r\n\r\n", bodyless: [false])
            #expect(!idle.closed)
            let metrics = try await fixture.request("/metrics").text
            #expect(metrics.contains("magpie_server_header_timeouts_total 1"))
        }
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
    func otherMethodsAre405WithAllow(method: String) async throws {
        try await ServerFixture.with { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg"), method: HTTPMethod(rawValue: method))
            #expect(answer.status == 405)
            #expect(answer.header("Allow") == "GET, HEAD")
            #expect(fixture.origin.totalRequests == 0)
        }
    }

    @Test func moreOptionsThanTheCapAre400AndTheCapIsConfigurable() async throws {
        let options = Array(repeating: "blur:0", count: 65)
        try await ServerFixture.with { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", options: options))
            #expect(answer.status == 400)
            #expect(answer.text.contains("more than 64 options"), "\(answer.text)")
            #expect(try await fixture.request(fixture.imagePath("photo.jpg", options: Array(options.prefix(64)))).status == 200)
        }
        try await ServerFixture.with(configure: { $0.maximumOptions = 70 }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", options: options))
            #expect(answer.status == 200)
        }
    }

    // MARK: Shutdown

    @Test func readyAnswers503DuringTheDrainWhileImagesAreStillServed() async throws {
        try await ServerFixture.with(service: { $0.drainDelay = .seconds(3) }) { fixture in
            let shutdown = Task { await fixture.service.shutdownTrigger.pull() }
            var ready = 200
            for _ in 0..<100 where ready == 200 {
                ready = try await fixture.request("/ready").status
                if ready == 200 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(ready == 503)
            // Still listening and still answering images: a balancer that has not yet seen the 503 loses nothing.
            #expect(try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:8x6:fit"])).status == 200)
            #expect(try await fixture.request("/health").status == 200)
            await shutdown.value
        }
    }

    @Test func aRequestCutByTheShutdownTimeoutIsLoggedAsAborted() async throws {
        let log = AccessLogCapture()
        try await ServerFixture.with(
            configure: {
                $0.accessLogFormat = .json
                $0.accessLogWriter = log.writer
            },
            service: { $0.shutdownTimeout = .milliseconds(500) }
        ) { fixture in
            fixture.origin.hold("photo.jpg")
            let request = Task { try? await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:9x9:fit"])) }
            while fixture.origin.heldRequests < 1 { try await Task.sleep(for: .milliseconds(10)) }
            await fixture.service.shutdownTrigger.pull()
            // Past the shutdown timeout: the group has cut the connection by now.
            try await Task.sleep(for: .milliseconds(1500))
            fixture.origin.release("photo.jpg")
            let answer = await request.value
            // The client got no answer (or at most a cut one), and the log says so instead of inventing a 503.
            #expect(answer == nil || answer?.status != 200)
            for _ in 0..<200 where log.entries.isEmpty { try await Task.sleep(for: .milliseconds(25)) }
            #expect(log.entries.map { $0["status"] as? String } == ["aborted"], "\(log.rawLines)")
        }
    }

    // MARK: Logs and metrics

    @Test func aRefusalKeepsItsBodyOpaqueAndItsReasonInTheAccessLine() async throws {
        let log = AccessLogCapture()
        try await ServerFixture.with(configure: {
            $0.allowedNetworks = []
            $0.accessLogFormat = .json
            $0.accessLogWriter = log.writer
        }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg"))
            #expect(answer.status == 403)
            #expect(answer.text == "source not allowed\n")
            let reason = log.entries.last?["reason"] as? String ?? ""
            #expect(reason.contains("127.0.0.1 is loopback"), "\(reason)")
        }
    }

    @Test func accessLinesCarryTheRequestIDClientAndUserAgent() async throws {
        let log = AccessLogCapture()
        try await ServerFixture.with(configure: {
            $0.accessLogFormat = .json
            $0.accessLogWriter = log.writer
        }) { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:8x6:fit"])
            let first = try await fixture.request(path, headers: [("X-Request-ID", "req-42"), ("User-Agent", "probe/1.0")])
            #expect(first.header("X-Request-ID") == "req-42")
            // Answered from memory on the event loop: the same fields.
            let second = try await fixture.request(path, headers: [("X-Request-ID", "bad id with spaces"), ("User-Agent", "probe/2.0")])
            let generated = try #require(second.header("X-Request-ID"))
            #expect(generated.count == 16 && generated.allSatisfy(\.isHexDigit))
            let entries = log.entries
            #expect(entries.count == 2)
            #expect(entries.map { $0["id"] as? String } == ["req-42", generated])
            #expect(entries.map { $0["client"] as? String } == ["127.0.0.1", "127.0.0.1"])
            #expect(entries.map { $0["ua"] as? String } == ["probe/1.0", "probe/2.0"])
            #expect(entries.map { $0["cache"] as? String } == ["none", "memory"])
            #expect(entries.allSatisfy { ($0["path"] as? String)?.hasPrefix("/…/resize:8x6:fit/plain/") == true })
        }
    }

    @Test(arguments: [AccessLogFormat.common, .combined])
    func clfLinesHaveTheirFieldsInOrder(format: AccessLogFormat) async throws {
        let log = AccessLogCapture()
        try await ServerFixture.with(configure: {
            $0.accessLogFormat = format
            $0.accessLogWriter = log.writer
        }) { fixture in
            let answer = try await fixture.request(
                fixture.imagePath("photo.jpg", options: ["resize:8x6:fit"]),
                headers: [("User-Agent", "probe \"quoted\""), ("Referer", "https://a.example/page")])
            let line = try #require(log.rawLines.last)
            let pattern = #"^127\.0\.0\.1 - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET /…/resize:8x6:fit/plain/\S+ HTTP/1\.1" 200 (\d+)"#
            let match = try #require(line.firstMatch(of: try Regex(pattern)), "\(line)")
            #expect(line.hasSuffix("\n"))
            #expect(Int(line[match.range].split(separator: " ").last ?? "") == answer.body.count)
            if format == .combined {
                #expect(line.hasSuffix(#" "https://a.example/page" "probe \x22quoted\x22""# + "\n"), "\(line)")
            }
        }
    }

    @Test func metricsHaveHelpLinesProcessSeriesAndBuildInfo() async throws {
        try await ServerFixture.with { fixture in
            _ = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:8x6:fit"]))
            let text = try await fixture.request("/metrics").text
            let lines = text.split(separator: "\n")
            let typed = Set(lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] })
            let helped = Set(lines.filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] })
            #expect(!typed.isEmpty)
            #expect(typed.subtracting(helped).isEmpty, "no HELP for \(typed.subtracting(helped))")
            for series in ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
                           "process_start_time_seconds", "process_virtual_memory_bytes"] {
                #expect(lines.contains { $0.hasPrefix(series + " ") }, "\(series)")
            }
            #expect(text.contains(#"magpie_server_build_info{version="\#(MagpieBuild.version)""#))
            let resident = lines.first { $0.hasPrefix("process_resident_memory_bytes ") }.flatMap { Double($0.split(separator: " ")[1]) }
            #expect((resident ?? 0) > 1_000_000)
        }
    }

    @Test func metricsCanBeServedOnTheirOwnPortAndThenNotOnTheMainOne() async throws {
        let (ports, sink) = AsyncStream<Int>.makeStream()
        try await ServerFixture.with(service: { service in
            service.metricsAddress = ("127.0.0.1", 0)
            service.onMetricsListening = { _, port in
                sink.yield(port)
                sink.finish()
            }
        }) { fixture in
            var iterator = ports.makeAsyncIterator()
            let metricsPort = try #require(await iterator.next())
            #expect(try await fixture.request("/metrics").status == 404)
            let response = try await fixture.client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(metricsPort)/metrics"), timeout: .seconds(30))
            let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
            #expect(response.status.code == 200)
            #expect(body.contains("magpie_server_build_info"))
        }
    }
}

extension ServerFixture {
    /// The signed plain-URL path for `source` (percent-encoded here) with `options`.
    func plainPath(_ source: String, options: [String] = []) -> String {
        let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return signed(options.map { "/" + $0 }.joined() + "/plain/" + encoded)
    }
}
