import Foundation
import MagpieOrigin
import Testing

@testable import Magpie
@testable import MagpieCore

/// `magpie fetch` as a subprocess against a local origin.
struct FetchCommandTests {
    struct Run {
        var status: Int32
        var lines: [[String: Any]]
        var stderr: String
    }

    /// Runs `magpie` off the cooperative pool (the origin serves from the same process).
    func magpie(_ arguments: [String]) async throws -> Run {
        let run = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ProcessRun, any Error>) in
            DispatchQueue.global().async { continuation.resume(with: Result { try ProcessRun.built("magpie", arguments) }) }
        }
        let lines = run.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return Run(status: run.status, lines: lines, stderr: run.stderr)
    }

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-fetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func fetchDownloadsThenServesFromDiskThenRevalidatesWith304() async throws {
        let origin = try await OriginFixture.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = origin.url("/img/pic.png")
        let common = ["fetch", "--json", "--cache-dir", folder.path, url]

        let first = try await magpie(common)
        #expect(first.status == 0)
        #expect(first.lines.count == 1)
        let line = try #require(first.lines.first)
        #expect(Set(line.keys) == ["url", "cacheType", "served", "revalidated", "bytes", "ms", "width", "height", "frames"])
        #expect(line["cacheType"] as? String == "none" && line["served"] as? String == "downloaded")
        #expect(line["bytes"] as? Int == OriginFixture.png.count)
        #expect(line["width"] as? Int == 64 && line["height"] as? Int == 48 && line["frames"] as? Int == 1)

        let second = try await magpie(common)
        #expect(second.lines.first?["cacheType"] as? String == "disk")
        #expect(second.lines.first?["bytes"] as? Int == 0)
        #expect(origin.requestCount(path: "/img/pic.png") == 1)

        let bodyBytes = origin.bodyBytesSent
        let third = try await magpie(common + ["--revalidate"])
        #expect(third.status == 0)
        #expect(third.lines.first?["cacheType"] as? String == "disk")
        #expect(third.lines.first?["revalidated"] as? Bool == true)
        #expect(third.lines.first?["served"] as? String == "revalidated")
        #expect(third.lines.first?["bytes"] as? Int == 0)
        #expect(origin.requestCount(path: "/img/pic.png") == 2)
        #expect(origin.bodyBytesSent == bodyBytes)
        await origin.stop()
    }

    @Test func respectCacheControlServesStaleWhileRevalidatingAndFinishesTheRevalidationBeforeExiting() async throws {
        let origin = try await OriginFixture.start()
        defer { Task { await origin.stop() } }
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var asset = OriginAsset(bytes: [UInt8](OriginFixture.png), contentType: "image/png")
        asset.headers = ["Cache-Control": "max-age=0, stale-while-revalidate=600"]
        origin.setAsset(asset, forName: "swr.png")
        let common = ["fetch", "--json", "--respect-cache-control", "--cache-dir", folder.path, origin.url("/img/swr.png")]
        #expect(try await magpie(common).lines.first?["served"] as? String == "downloaded")
        let second = try await magpie(common)
        #expect(second.lines.first?["served"] as? String == "stale")
        #expect(second.lines.first?["staleReason"] as? String == "whileRevalidating")
        // The revalidation ran before the process exited: the origin saw it, conditional.
        #expect(origin.requestCount(path: "/img/swr.png") == 2)
        #expect(origin.lastRequestHeaders(path: "/img/swr.png")["if-none-match"] == asset.etag)
    }

    @Test func headerFlagsAreSentAndCacheLayerFlagsAreHonoured() async throws {
        let origin = try await OriginFixture.start()
        defer { Task { await origin.stop() } }
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = origin.url("/img/pic.png")
        let first = try await magpie([
            "fetch", "--json", "--no-disk-cache-write", "--header", "Accept: image/avif", "--header", "X-Trace: 7",
            "--cache-dir", folder.path, url,
        ])
        #expect(first.status == 0)
        let headers = origin.lastRequestHeaders(path: "/img/pic.png")
        #expect(headers["accept"] == "image/avif" && headers["x-trace"] == "7")
        // Nothing was written: the next run downloads again, and that one (with --no-memory-cache) fills the disk.
        #expect(try await magpie(["fetch", "--json", "--no-memory-cache", "--cache-dir", folder.path, url]).lines.first?["served"] as? String == "downloaded")
        #expect(try await magpie(["fetch", "--json", "--cache-dir", folder.path, url]).lines.first?["cacheType"] as? String == "disk")
        #expect(origin.requestCount(path: "/img/pic.png") == 2)
        let bad = try await magpie(["fetch", "--header", "no colon", url])
        #expect(bad.status == 2)
    }

    @Test func repeatedURLsInOneCallShareOneRequest() async throws {
        let origin = try await OriginFixture.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = origin.url("/slow/noise.png?chunk=16384&delay=20")
        let run = try await magpie(["fetch", "--json", "--cache-dir", folder.path, url, url, url])
        #expect(run.status == 0)
        #expect(run.lines.count == 3)
        #expect(run.lines.allSatisfy { $0["width"] as? Int == 256 })
        #expect(origin.requestCount(path: "/slow/noise.png") == 1)
        await origin.stop()
    }

    @Test func failuresPrintURLAndErrorAndExitOne() async throws {
        let origin = try await OriginFixture.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = origin.url("/img/missing.png")
        let run = try await magpie(["fetch", "--json", "--cache-dir", folder.path, missing, origin.url("/img/photo.jpg")])
        #expect(run.status == 1)
        let failure = try #require(run.lines.first { $0["error"] != nil })
        #expect(Set(failure.keys) == ["url", "error"])
        #expect(failure["url"] as? String == missing)
        #expect((failure["error"] as? String)?.contains("HTTP 404") == true)
        #expect(run.lines.contains { $0["width"] as? Int == 80 })

        let offline = try await magpie(["fetch", "--json", "--only-from-cache", "--cache-dir", folder.path, origin.url("/img/pic.png")])
        #expect(offline.status == 1)
        #expect((offline.lines.first?["error"] as? String)?.contains("not cached") == true)
        #expect(origin.requestCount(path: "/img/pic.png") == 0)

        let plain = try await magpie(["fetch", "--cache-dir", folder.path, origin.url("/html")])
        #expect(plain.status == 1)
        #expect(plain.stderr.contains("not an image") && plain.stderr.contains("/html"))
        // One line, the URL once: the error text names it, so the line does not add it again.
        #expect(plain.stderr.split(separator: "\n").count == 1)
        #expect(plain.stderr.components(separatedBy: origin.url("/html")).count == 2, "\(plain.stderr)")
        #expect(plain.stderr.hasPrefix("bad response: not an image (text/html") && plain.stderr.contains("; the bytes are not a known image format) from "),
                "\(plain.stderr)")
        await origin.stop()
    }

    @Test func outWritesTheBytesAndTimeoutIsEnforced() async throws {
        let origin = try await OriginFixture.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out")
        let run = try await magpie(["fetch", "--cache-dir", folder.path, "--out", out.path, origin.url("/img/photo.jpg")])
        #expect(run.status == 0)
        #expect(try Data(contentsOf: out.appendingPathComponent("photo.jpg")) == OriginFixture.jpeg)

        let started = ContinuousClock.now
        let slow = try await magpie(["fetch", "--json", "--timeout", "0.5", "--cache-dir", folder.path, origin.url("/stall/pic.png")])
        #expect(slow.status == 1)
        #expect((slow.lines.first?["error"] as? String)?.contains("timed out") == true)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(try await magpie(["fetch", "--timeout", "0", "x"]).status == 2)
        await origin.stop()
    }
}

extension FetchCommandTests {
    @Test func processorSpecIsAppliedCachedAndWritten() async throws {
        let origin = try await OriginFixture.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = origin.url("/img/photo.jpg")
        let common = ["fetch", "--json", "--cache-dir", folder.path, "--processor", "downsample:40x40", url]
        let first = try await magpie(common + ["--out", folder.appendingPathComponent("out").path, "--cache-original"])
        #expect(first.status == 0)
        #expect(first.lines.first?["width"] as? Int == 40 && first.lines.first?["height"] as? Int == 30)
        let written = try Data(contentsOf: folder.appendingPathComponent("out/photo.jpg"))
        #expect(try ImageCoderRegistry.shared.decode(written).pixelSize == PixelSize(width: 40, height: 30))
        let second = try await magpie(common)
        #expect(second.lines.first?["cacheType"] as? String == "disk")
        // The original was kept too: the unprocessed image needs no download.
        let original = try await magpie(["fetch", "--json", "--cache-dir", folder.path, url])
        #expect(original.lines.first?["cacheType"] as? String == "disk")
        #expect(original.lines.first?["width"] as? Int == 80)
        let small = try await magpie(["fetch", "--json", "--cache-dir", folder.path, "--downsample", "20x20", url])
        #expect(small.lines.first?["width"] as? Int == 20)
        #expect(origin.requestCount(path: "/img/photo.jpg") == 1)
        await origin.stop()
    }

    @Test func invalidProcessorSpecIsAUsageErrorNamingThePart() async throws {
        let run = try await magpie(["fetch", "--processor", "downsample:40x40|sparkle:3", "http://127.0.0.1:9/x.png"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("sparkle:3"))
        let convert = try await magpie(["convert", "--processor", "downsample:0x10", "in.png", "out.png"])
        #expect(convert.status == 2)
        #expect(convert.stderr.contains("downsample:0x10"))
    }

    @Test func convertAppliesTheProcessorChain() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in.jpg"), output = folder.appendingPathComponent("out.png")
        try OriginFixture.jpeg.write(to: input)
        let run = try await magpie(["convert", "--json", "--max-size", "60x60", "--processor", "downsample:30x30", input.path, output.path])
        #expect(run.status == 0)
        #expect(run.lines.first?["width"] as? Int == 30 && run.lines.first?["height"] as? Int == 23)
        #expect(try ImageCoderRegistry.shared.decode(Data(contentsOf: output)).width == 30)
    }
}

extension FetchCommandTests {
    @Test func aRefusedConnectionIsOneLineNamingTheCauseAndTheURLOnce() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Port 1 on loopback: nothing listens, the connect is refused.
        let url = "http://127.0.0.1:1/x.jpg"
        // Both at once: the HTTP client keeps trying a refused connect until its connect timeout (10 s).
        async let text = magpie(["fetch", "--cache-dir", folder.path, url])
        async let jsonRun = magpie(["fetch", "--json", "--cache-dir", folder.path, url])
        let run = try await text
        #expect(run.status == 1)
        #expect(run.stderr == "request failed: connection refused for \(url)\n")
        let json = try await jsonRun
        #expect(json.lines.first?["error"] as? String == "request failed: connection refused for \(url)")
        #expect(json.lines.first?["url"] as? String == url)
    }

    @Test func aLocalFileIsReportedAsFromFileNotAsADownload() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("pic.png")
        try OriginFixture.png.write(to: file)
        for (index, argument) in [file.path, file.absoluteString].enumerated() {
            let run = try await ProcessRun.builtOffThePool("magpie", ["fetch", "--cache-dir", folder.appendingPathComponent("cache\(index)").path, argument])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.hasPrefix("\(argument): 64x48, 1 frame(s), from file, "), "\(run.stdout)")
            #expect(!run.stdout.contains("network") && !run.stdout.contains("downloaded"), "\(run.stdout)")
        }
        let missing = folder.appendingPathComponent("none.png").path
        let absent = try await ProcessRun.builtOffThePool("magpie", ["fetch", "--cache-dir", folder.appendingPathComponent("cache").path, missing])
        #expect(absent.status == 1)
        #expect(absent.stderr.components(separatedBy: missing).count == 2, "\(absent.stderr)")
    }
}
