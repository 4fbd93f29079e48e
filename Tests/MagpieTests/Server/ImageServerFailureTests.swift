import Foundation
import MagpieOrigin
import MagpieServer
import Synchronization
import Testing

@testable import MagpieCore

/// What `ImageServer` answers when sources fail, limits are hit, addresses are refused or it is overloaded.
@Suite("ImageServer failures and limits", .serialized)
struct ImageServerFailureTests {
    @Test(arguments: [
        ("status/404", 404), ("status/500", 502), ("img/fake.png", 415), ("img/corrupt.png", 422), ("img/missing.png", 404),
    ])
    func originFailuresMapToTheirStatus(route: String, expected: Int) async throws {
        try await ServerFixture.with { fixture in
            let source = fixture.origin.url("/" + route).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let answer = try await fixture.request(fixture.signed("/resize:20x20:fit/plain/" + source))
            #expect(answer.status == expected, "\(route): \(answer.text)")
            #expect(!answer.text.contains("127.0.0.1"), "an error must not say what answered where")
        }
    }

    @Test func aStalledOriginIs504AfterTheDownloadTimeout() async throws {
        try await ServerFixture.with(configure: { $0.downloadTimeout = .milliseconds(500) }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", route: "stall"))
            #expect(answer.status == 504)
            #expect(answer.header("Cache-Control") == "no-store")
        }
    }

    @Test func aSourceOverTheByteLimitIs413() async throws {
        try await ServerFixture.with(configure: { $0.maximumSourceBytes = 10_000 }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("noise.png"))
            #expect(answer.status == 413)
        }
    }

    @Test func aSourceOverThePixelLimitIs422() async throws {
        try await ServerFixture.with(configure: { $0.maximumPixels = 1_000 }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:10x10:fit"]))
            #expect(answer.status == 422, "\(answer.text)")
        }
    }

    @Test(.enabled(if: SVGCoderTests.hasGzip))
    func aGzipCompressedSVGFromTheOriginIsRendered() async throws {
        let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="4"><rect width="8" height="4" fill="red"/></svg>"#.utf8)
        let asset = OriginAsset(bytes: try SVGCoderTests.gzipped(svg), contentType: "image/svg+xml")
        try await ServerFixture.with(extraAssets: ["a.svgz": asset]) { fixture in
            let answer = try await fixture.request(fixture.imagePath("a.svgz", options: ["resize:16x16:fit"], extension: "png"))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try ImageCoderRegistry.shared.decode(answer.body).pixelSize == PixelSize(width: 16, height: 8))
        }
    }

    @Test func anAnimationOverTheFrameLimitIs422AndWithinItStaysAnimated() async throws {
        let frames = try (0..<4).map { index in
            let rgba = [UInt8]((0..<256).flatMap { _ in [UInt8(index * 60), 0, 255 - UInt8(index * 60), 255] })
            return ImageFrame(pixels: try Image(width: 16, height: 16, rgba: rgba).pixels, duration: .milliseconds(100))
        }
        let gif = try ImageCoderRegistry.shared.encode(try Image(frames: frames), as: .gif)
        let asset = OriginAsset(bytes: [UInt8](gif), contentType: "image/gif")
        try await ServerFixture.with(extraAssets: ["anim.gif": asset], configure: { $0.maximumFrames = 3 }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("anim.gif"))
            #expect(answer.status == 422)
        }
        try await ServerFixture.with(extraAssets: ["anim.gif": asset]) { fixture in
            let answer = try await fixture.request(fixture.imagePath("anim.gif", options: ["resize:8x8:fit"], extension: "webp"))
            #expect(answer.status == 200)
            #expect(try ImageCoderRegistry.shared.decode(answer.body).frames.count == 4)
            let first = try await fixture.request(fixture.imagePath("anim.gif", options: ["frames:first"], extension: "webp"))
            #expect(try ImageCoderRegistry.shared.decode(first.body).frames.count == 1)
        }
    }

    @Test func aLoopbackSourceIsRefusedWithoutAllowNetworkAndNeverFetched() async throws {
        try await ServerFixture.with(configure: { $0.allowedNetworks = [] }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg"))
            #expect(answer.status == 403)
            #expect(!answer.text.contains("127.0.0.1"))
            #expect(fixture.origin.totalRequests == 0)
        }
    }

    @Test func aRedirectFromAnAllowedOriginToARefusedAddressIsRefused() async throws {
        try await ServerFixture.with(configure: { $0.allowedNetworks = ["127.0.0.1/32"] }) { fixture in
            let target = "http://169.254.169.254/latest/meta-data".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let source = fixture.origin.url("/to?location=" + target).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let answer = try await fixture.request(fixture.signed("/resize:10x10:fit/plain/" + source))
            #expect(answer.status == 403)
            #expect(!answer.text.contains("169.254"))
            #expect(fixture.origin.requestCount(path: "/to") == 1)
        }
    }

    @Test func aSourceOutsideTheAllowedPrefixesIsRefused() async throws {
        try await ServerFixture.with(configure: { $0.allowedSourcePrefixes = ["https://images.example.com/"] }) { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg"))
            #expect(answer.status == 403)
            #expect(fixture.origin.totalRequests == 0)
        }
    }

    @Test func localSourcesAreReadOnlyInsideTheRootAndNeverThroughALinkOut() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-serve-local-\(UUID().uuidString)")
        let root = folder.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try OriginFixture.jpeg.write(to: root.appendingPathComponent("photo.jpg"))
        try OriginFixture.jpeg.write(to: folder.appendingPathComponent("secret.jpg"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("link.jpg").path, withDestinationPath: folder.appendingPathComponent("secret.jpg").path)
        try await ServerFixture.with(configure: { $0.localRoot = root.path }) { fixture in
            #expect(try await fixture.request(fixture.signed("/resize:8x8:fit/plain/local%3A%2F%2F%2Fphoto.jpg")).status == 200)
            #expect(try await fixture.request(fixture.signed("/plain/local%3A%2F%2F%2Flink.jpg")).status == 403)
            let dotdot = try await fixture.request(fixture.signed("/plain/local%3A%2F%2F%2F..%2Fsecret.jpg"))
            #expect(dotdot.status == 400 || dotdot.status == 403)
            #expect(try await fixture.request(fixture.signed("/plain/local%3A%2F%2F%2Fnone.jpg")).status == 404)
        }
        try await ServerFixture.with { fixture in
            let answer = try await fixture.request(fixture.signed("/plain/local%3A%2F%2F%2Fphoto.jpg"))
            #expect(answer.status == 403)
        }
    }

    @Test func aBurstPastWorkersAndQueueGets429WithRetryAfter() async throws {
        try await ServerFixture.with(configure: { $0.workers = 1; $0.queueLength = 1 }) { fixture in
            fixture.origin.hold("photo.jpg")
            let answers = try await withThrowingTaskGroup(of: ServerFixture.Answer.self) { group in
                for size in 10..<14 {
                    group.addTask { try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:\(size)x\(size):fit"])) }
                }
                var collected: [ServerFixture.Answer] = []
                // Two are admitted (one runs, one waits); the other two are refused at once.
                for _ in 0..<2 { if let answer = try await group.next() { collected.append(answer) } }
                fixture.origin.release("photo.jpg")
                for try await answer in group { collected.append(answer) }
                return collected
            }
            let refused = answers.filter { $0.status == 429 }
            #expect(refused.count == 2)
            #expect(refused.allSatisfy { $0.header("Retry-After") != nil })
            #expect(answers.filter { $0.status == 200 }.count == 2)
        }
    }

    @Test func withTheOneWorkerBusyANewJobIs429ButAMemoryHitAndAnIdenticalMissPassTheGate() async throws {
        try await ServerFixture.with(configure: { $0.workers = 1; $0.queueLength = 0 }) { fixture in
            let cached = fixture.imagePath("pic.png", options: ["resize:20x20:fit"])
            let first = try await fixture.request(cached)
            #expect(first.status == 200)
            fixture.origin.hold("photo.jpg")
            let busy = fixture.imagePath("photo.jpg", options: ["resize:10x10:fit"])
            async let running = fixture.request(busy)
            while fixture.origin.heldRequests < 1 { try await Task.sleep(for: .milliseconds(10)) }
            // JobAdmission is the one gate, and it is full: a different result is refused at once.
            let refused = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:12x12:fit"]))
            #expect(refused.status == 429)
            // Before it in the documented order: the memory layer, then the job an identical request already runs.
            let hit = try await fixture.request(cached)
            #expect(hit.status == 200 && hit.header("X-Magpie-Cache") == "memory" && hit.body == first.body)
            async let joined = fixture.request(busy)
            try await Task.sleep(for: .milliseconds(200))
            fixture.origin.release("photo.jpg")
            let (ran, joining) = try await (running, joined)
            #expect(ran.status == 200 && joining.status == 200 && joining.body == ran.body)
            #expect(fixture.origin.requestCount(path: "/img/photo.jpg") == 1)
        }
    }

    @Test func aRequestWaitingLongerThanItsTimeoutGets503() async throws {
        try await ServerFixture.with(configure: { $0.workers = 1; $0.processingTimeout = .milliseconds(400) }) { fixture in
            fixture.origin.hold("photo.jpg")
            async let running = fixture.request(fixture.imagePath("photo.jpg", options: ["resize:10x10:fit"]))
            while fixture.origin.heldRequests < 1 { try await Task.sleep(for: .milliseconds(10)) }
            let waiting = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:12x12:fit"]))
            #expect(waiting.status == 503)
            fixture.origin.release("photo.jpg")
            _ = try await running
        }
    }

    @Test func processingPastItsTimeoutIs503WithoutWaitingForTheWorkAndTheJobStops() async throws {
        // The same timeout bounds the wait for a worker, which is free here: 2 s leaves a busy machine time to start
        // the job. A hundred blur passes take about 30 s in the suite's debug build (more options than the default cap
        // of 64, raised here); each blur checks between rows, so the cancelled job stops soon after the answer.
        try await ServerFixture.with(configure: {
            $0.processingTimeout = .seconds(2)
            $0.maximumOptions = 128
        }) { fixture in
            let blurs = Array(repeating: "blur:3", count: 100)
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:300x300:none"] + blurs))
            #expect(answer.status == 503)
            #expect(answer.text.contains("processing took longer"), "\(answer.text)")
            // The job counts itself cancelled when it stops; a job left running would keep a worker and never count.
            var metrics = ""
            func stopped() -> Bool {
                metrics.contains("magpie_server_jobs_cancelled_total 1") && metrics.contains("magpie_server_jobs_in_flight 0")
            }
            for _ in 0..<300 where !stopped() {
                try await Task.sleep(for: .milliseconds(100))
                metrics = try await fixture.request("/metrics").text
            }
            #expect(metrics.contains("magpie_server_jobs_cancelled_total 1"))
            #expect(metrics.contains("magpie_server_jobs_in_flight 0"))
        }
    }

    @Test func gracefulShutdownLetsRequestsInFlightFinish() async throws {
        try await ServerFixture.with { fixture in
            fixture.origin.hold("photo.jpg")
            let requests = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for size in 10..<13 {
                        group.addTask { try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:\(size)x\(size):fit"])).status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            while fixture.origin.heldRequests < 1 { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(100))
            let shutdown = Task { await fixture.service.shutdownTrigger.pull() }
            try await Task.sleep(for: .milliseconds(200))
            #expect(fixture.server.isReady == false)
            fixture.origin.release("photo.jpg")
            let statuses = try await requests.value
            await shutdown.value
            #expect(statuses == [200, 200, 200])
        }
    }

    @Test func theFreeMemoryHookRunsEveryIntervalUntilShutdown() async throws {
        let calls = CallCounter()
        try await ServerFixture.with(service: {
            $0.freeMemoryReleaseInterval = .milliseconds(20)
            $0.releaseFreeMemory = { calls.add() }
        }) { _ in
            for _ in 0..<250 where calls.value < 3 { try await Task.sleep(for: .milliseconds(20)) }
        }
        // The fixture has returned from the service's run(): the timer ended with it.
        let atShutdown = calls.value
        #expect(atShutdown >= 3)
        try await Task.sleep(for: .milliseconds(200))
        #expect(calls.value == atShutdown)
    }

    @Test func healthReadyAndMetricsAnswerAfterTraffic() async throws {
        try await ServerFixture.with { fixture in
            #expect(try await fixture.request("/health").status == 200)
            #expect(try await fixture.request("/ready").status == 200)
            _ = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:20x15:fit"]))
            _ = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:20x15:fit"]))
            _ = try await fixture.request(fixture.imagePath("photo.jpg", options: ["nonsense:1"]))
            let metrics = try await fixture.request("/metrics").text
            #expect(metrics.contains(#"magpie_server_requests_total{route="image",status="200"} 2"#))
            #expect(metrics.contains(#"magpie_server_requests_total{route="image",status="400"} 1"#))
            #expect(metrics.contains(#"magpie_server_cache_hits_total{layer="memory"} 1"#))
            for phase in ["queue", "download", "decode", "process", "encode", "total"] {
                #expect(metrics.contains(#"magpie_server_phase_seconds_count{phase="\#(phase)"}"#), "\(phase)")
            }
            #expect(metrics.contains("magpie_server_jobs_in_flight"))
            #expect(metrics.contains("magpie_server_source_bytes_total"))
        }
    }
}

/// How many times a hook was called, from any thread.
private final class CallCounter: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    func add() { count.withLock { $0 += 1 } }
}
