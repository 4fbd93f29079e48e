import AsyncHTTPClient
import Foundation
import MagpieServer
import Synchronization
import Testing

@testable import MagpieCore

/// `magpie serve` as a process: the listening line, flags over environment over file, SIGTERM with a request in flight.
@Suite("magpie serve", .serialized)
struct ServeCommandTests {
    /// A running `magpie serve`: its base URL and process; `stop()` sends SIGTERM and returns the exit status.
    final class Served: @unchecked Sendable {
        let process: Process
        let base: String
        let errors: Pipe
        private let logged = Mutex(Data())

        /// What the server wrote to standard error so far (its log).
        var log: String { String(decoding: logged.withLock { $0 }, as: UTF8.self) }

        init(arguments: [String], environment: [String: String] = [:]) throws {
            process = Process()
            process.executableURL = try BuiltProducts.executable("magpie")
            process.arguments = ["serve", "--port", "0"] + arguments
            var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MAGPIE_") }
            merged.merge(environment) { _, new in new }
            process.environment = merged
            let out = Pipe()
            errors = Pipe()
            process.standardOutput = out
            process.standardError = errors
            try process.run()
            // The first line is the contract: `listening on http://HOST:PORT` once connections are accepted.
            var line = Data()
            while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
                line.append(byte)
            }
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("listening on http://127.0.0.1:") else {
                process.terminate()
                let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no listening line: \(text) \(stderr)"])
            }
            base = String(text.dropFirst("listening on ".count))
            // Drained from now on: a server that writes more than a pipe holds (its log, a sanitizer's exit report)
            // would otherwise block on the write and never exit when stop() waits for it.
            errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let chunk = handle.availableData
                if chunk.isEmpty { handle.readabilityHandler = nil }
                self?.logged.withLock { $0.append(chunk) }
            }
        }

        func stop() -> Int32 {
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            process.waitUntilExit()
            return process.terminationStatus
        }

        /// The peak resident set of the server process so far (VmHWM), in KiB.
        var peakResidentKiB: Int {
            let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }

        func get(_ path: String) async throws -> (status: Int, body: Data, cacheControl: String?) {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + path), timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 16 * 1024 * 1024)
            return (Int(response.status.code), Data(body.readableBytesView), response.headers.first(name: "Cache-Control"))
        }
    }

    private func localRoot() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-serve-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try OriginFixture.jpeg.write(to: root.appendingPathComponent("photo.jpg"))
        return root
    }

    @Test func servesASignedLocalImageAndExitsZeroOnSIGTERM() async throws {
        let root = try localRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let served = try Served(arguments: [
            "--key", ServerFixture.key, "--salt", ServerFixture.salt, "--local-root", root.path,
            "--cache-dir", root.appendingPathComponent("cache").path,
        ])
        let signer = try ImageURLSigner(hexPairs: [(key: ServerFixture.key, salt: ServerFixture.salt)])
        let path = "/resize:20x15:fit/plain/local%3A%2F%2F%2Fphoto.jpg@png"
        let answer = try await served.get("/" + signer.signature(forPath: path) + path)
        let unsigned = try await served.get("/insecure" + path)
        let health = try await served.get("/health")
        #expect(served.stop() == 0)
        #expect(answer.status == 200)
        #expect(try ImageCoderRegistry.shared.decode(answer.body).pixelSize == PixelSize(width: 20, height: 15))
        #expect(unsigned.status == 403)
        #expect(health.status == 200)
    }

    @Test func flagsWinOverTheEnvironmentWhichWinsOverTheConfigFile() async throws {
        let root = try localRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let config = root.appendingPathComponent("serve.json")
        // The file allows unsigned URLs and sets a max-age; the environment overrides the max-age; a flag the pixels.
        try Data(#"{"insecureUnsigned": true, "maxAge": 111, "maxPixels": 10, "localRoot": "\#(root.path)"}"#.utf8).write(to: config)
        let served = try Served(
            arguments: ["--config", config.path, "--max-pixels", "50000000", "--cache-dir", root.appendingPathComponent("cache").path],
            environment: ["MAGPIE_MAX_AGE": "222"])
        let answer = try await served.get("/insecure/resize:20x15:fit/plain/local%3A%2F%2F%2Fphoto.jpg@png")
        #expect(served.stop() == 0)
        #expect(answer.status == 200)
        #expect(answer.cacheControl == "public, max-age=222")
    }

    /// The library counts downloads and cache lookups with swift-metrics; `magpie serve` bootstraps `MetricsSystem`
    /// (this test process never does) and `/metrics` shows those series after the server's own, in one valid text.
    @Test func metricsShowsTheLibrarysDownloadAndCacheCountersBesideTheServers() async throws {
        let origin = try await OriginFixture.start()
        let root = try localRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let served: Served
        do {
            served = try Served(arguments: [
                "--insecure-unsigned", "--allow-network", "127.0.0.0/8", "--cache-dir", root.appendingPathComponent("cache").path,
            ])
        } catch {
            await origin.stop()
            throw error
        }
        let source = origin.url("/img/photo.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let answer = try? await served.get("/insecure/resize:20x15:fit/plain/\(source)@png")
        let metrics = String(decoding: (try? await served.get("/metrics"))?.body ?? Data(), as: UTF8.self)
        #expect(served.stop() == 0)
        await origin.stop()
        #expect(answer?.status == 200)

        var samples: [String: Double] = [:]
        for line in metrics.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        let downloader = #"{downloader="magpie.server"}"#
        #expect((samples["magpie_download_requests_total" + downloader] ?? 0) > 0, "\(metrics)")
        #expect((samples["magpie_download_bytes_total" + downloader] ?? 0) > 0)
        #expect((samples[#"magpie_download_responses_total{downloader="magpie.server",status="2xx"}"#] ?? 0) > 0)
        #expect((samples["magpie_download_duration_count" + downloader] ?? 0) > 0)
        #expect(samples.keys.contains { $0.hasPrefix("magpie_cache_") && $0.contains(#"cache="magpie-serve""#) }, "\(metrics)")
        // The server's own series are still there, beside them.
        #expect((samples[#"magpie_server_requests_total{route="image",status="200"}"#] ?? 0) == 1)
        // One text a scraper accepts: each family typed once, and every name valid.
        let types = metrics.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        #expect(types.count == Set(types).count, "\(types)")
        let name = try Regex("^[a-zA-Z_:][a-zA-Z0-9_:]*$")
        for sample in samples.keys {
            let metric = sample.prefix { $0 != "{" }
            #expect(metric.wholeMatch(of: name) != nil, "\(sample)")
        }
    }

    @Test func aBadSettingIsAUsageErrorNamingIt() throws {
        let run = try ProcessRun.built("magpie", ["serve", "--port", "0", "--allow-network", "10.0.0.0/99"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("10.0.0.0/99"))
        let keys = try ProcessRun.built("magpie", ["serve", "--port", "0", "--key", "zz", "--salt", "00"])
        #expect(keys.status == 2)
        #expect(keys.stderr.lowercased().contains("key"))
    }

    @Test func aTallThinResultIsRefusedAtOnceAndAnOverdueJobIsCancelledWithPeakMemoryBounded() async throws {
        let root = try localRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        // A 0.3 s deadline: enlarging to 7000×7000 (49 MP, under --max-pixels and the side limit) takes far longer.
        let served = try Served(arguments: [
            "--insecure-unsigned", "--local-root", root.path, "--processing-timeout", "0.3", "--workers", "1",
            "--cache-dir", root.appendingPathComponent("cache").path,
        ])
        for option in ["resize:1x49000000:none", "resize:49000000x1:none", "resize:1x20000000:none"] {
            let answer = try await served.get("/insecure/\(option)/plain/local%3A%2F%2F%2Fphoto.jpg@png")
            #expect(answer.status == 422, "\(option): \(String(decoding: answer.body, as: UTF8.self))")
        }
        let overdue = try await served.get("/insecure/resize:7000x7000:none/plain/local%3A%2F%2F%2Fphoto.jpg@png")
        #expect(overdue.status == 503)
        var metrics = ""
        for _ in 0..<300 where !metrics.contains("magpie_server_jobs_cancelled_total 1") {
            try await Task.sleep(for: .milliseconds(100))
            metrics = String(decoding: try await served.get("/metrics").body, as: UTF8.self)
        }
        #expect(metrics.contains("magpie_server_jobs_cancelled_total 1"), "the overdue job kept running")
        // Before the limits 1×49,000,000 alone took the process from about 4.2 to 5.2 GB; the 49 MP output (196 MB) and
        // the resize's rows and tables are what it may hold now.
        let peak = served.peakResidentKiB
        #expect(served.stop() == 0)
        #expect(peak > 0 && peak < 600 * 1024, "peak RSS \(peak) KiB")
    }

    @Test(arguments: [
        (#"{"maxSourceByte": "1MB"}"#, #"unknown setting "maxSourceByte""#, #"did you mean "maxSourceBytes"?"#),
        (#"{"max_source_bytes": "1MB"}"#, #"unknown setting "max_source_bytes""#, #"did you mean "maxSourceBytes"?"#),
        (#"{"max-source-bytes": "1MB"}"#, #"unknown setting "max-source-bytes""#, #"did you mean "maxSourceBytes"?"#),
        (#"{"maxSourceBytes": "1MB""#, "is not valid JSON", "serve.json"),
        (#"["maxSourceBytes"]"#, "must hold a JSON object", "serve.json"),
    ])
    func aBadConfigurationFileIsRefusedReadably(contents: String, problem: String, hint: String) throws {
        let root = try localRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let config = root.appendingPathComponent("serve.json")
        try Data(contents.utf8).write(to: config)
        let run = try ProcessRun.built("magpie", ["serve", "--port", "0", "--config", config.path], environment: [:])
        #expect(run.status == 2)
        #expect(run.stderr.contains(problem) && run.stderr.contains(hint), "\(run.stderr)")
        #expect(!run.stderr.contains("NSCocoaErrorDomain"))
    }

    @Test func anUnknownMagpieVariableIsRefusedWithTheNearestName() throws {
        let run = try ProcessRun.built("magpie", ["serve", "--port", "0"], environment: ["MAGPIE_MAX_SOURCE_BYTE": "1MB"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("unknown environment variable MAGPIE_MAX_SOURCE_BYTE (did you mean MAGPIE_MAX_SOURCE_BYTES?)"),
                "\(run.stderr)")
    }

    @Test(arguments: [["--port", "99999"], ["--port=-1"], ["--metrics-port", "70000"]])
    func aPortOutsideZeroTo65535IsAUsageError(arguments: [String]) throws {
        let run = try ProcessRun.built("magpie", ["serve"] + arguments, environment: [:])
        #expect(run.status == 2)
        #expect(run.stderr.contains("is not a port (0 to 65535)"), "\(run.stderr)")
    }

    @Test func anAddressInUseIsNamedInTheError() throws {
        let served = try Served(arguments: ["--insecure-unsigned"])
        defer { _ = served.stop() }
        let port = try #require(served.base.split(separator: ":").last.map(String.init))
        let run = try ProcessRun.built("magpie", ["serve", "--insecure-unsigned", "--port", port], environment: [:])
        #expect(run.status != 0)
        #expect(run.stderr.contains("cannot listen on 127.0.0.1:\(port): Address already in use"), "\(run.stderr)")
    }

    @Test func signingKeysComeFromAnOwnerOnlyFileOrTheEnvironmentAndOnTheCommandLineWithAWarning() async throws {
        let root = try localRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let keyFile = root.appendingPathComponent("keys")
        try Data("# rotated monthly\n\(ServerFixture.key):\(ServerFixture.salt)\n".utf8).write(to: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile.path)
        let open = try ProcessRun.built("magpie", ["serve", "--port", "0", "--key-file", keyFile.path], environment: [:])
        #expect(open.status == 2)
        #expect(open.stderr.contains("can be read by other users (mode 644); chmod 600 it"), "\(open.stderr)")
        #expect(!open.stderr.contains(ServerFixture.key))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
        let signer = try ImageURLSigner(hexPairs: [(key: ServerFixture.key, salt: ServerFixture.salt)])
        let path = "/resize:20x15:fit/plain/local%3A%2F%2F%2Fphoto.jpg@png"
        let cache = root.appendingPathComponent("cache").path
        let fromFile = try Served(arguments: ["--key-file", keyFile.path, "--local-root", root.path, "--cache-dir", cache])
        #expect(try await fromFile.get("/" + signer.signature(forPath: path) + path).status == 200)
        #expect(fromFile.stop() == 0)
        #expect(!fromFile.log.contains("visible to every local user"))
        let fromEnvironment = try Served(
            arguments: ["--local-root", root.path, "--cache-dir", cache],
            environment: ["MAGPIE_KEY": ServerFixture.key, "MAGPIE_SALT": ServerFixture.salt])
        #expect(try await fromEnvironment.get("/" + signer.signature(forPath: path) + path).status == 200)
        #expect(fromEnvironment.stop() == 0)
        let onArguments = try Served(arguments: [
            "--key", ServerFixture.key, "--salt", ServerFixture.salt, "--local-root", root.path, "--cache-dir", cache,
        ])
        #expect(onArguments.stop() == 0)
        #expect(onArguments.log.contains("visible to every local user in ps"))
        // The test key is 15 bytes: the server says it is short.
        #expect(onArguments.log.contains("signing key 1 is 15 bytes; use at least 32"))
    }

    @Test func versionPrintsTheRelease() throws {
        let run = try ProcessRun.built("magpie", ["--version"])
        #expect(run.status == 0)
        #expect(run.stdout == "magpie \(MagpieBuild.version)\n")
    }

    @Test func sigtermDrainsWithReadyAt503ThenClosesAndLogsEachStep() async throws {
        let served = try Served(arguments: ["--insecure-unsigned", "--drain-delay", "2"])
        kill(served.process.processIdentifier, SIGTERM)
        var ready = 200
        for _ in 0..<100 where ready == 200 {
            ready = try await served.get("/ready").status
            if ready == 200 { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(ready == 503)
        #expect(try await served.get("/health").status == 200)
        #expect(served.stop() == 0)
        let log = served.log
        for step in ["shutdown started: /ready answers 503; draining", "closing the listener", "stopped"] {
            #expect(log.contains(step), "\(step) in \(log)")
        }
    }

    @Test func imgproxysEnvironmentIsReadAndMagpiesWinsAndPrintConfigSaysWhere() throws {
        let run = try ProcessRun.built("magpie", ["serve", "--print-config", "--workers", "3"], environment: [
            "IMGPROXY_KEY": ServerFixture.key, "IMGPROXY_SALT": ServerFixture.salt, "IMGPROXY_TTL": "600",
            "MAGPIE_MAX_AGE": "900", "IMGPROXY_QUALITY": "70", "IMGPROXY_FORMAT_QUALITY": "webp=60,avif=40",
            "IMGPROXY_MAX_SRC_RESOLUTION": "12.5", "IMGPROXY_BIND": ":9090", "IMGPROXY_PRESETS": "thumb=rs:fill:100:100/q:60",
            "IMGPROXY_ENFORCE_WEBP": "true", "IMGPROXY_USE_ETAG": "false", "IMGPROXY_READ_TIMEOUT": "10",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        func line(_ key: String) -> String { lines.first { $0.hasPrefix(key + " ") } ?? "" }
        #expect(line("maxAge").contains("900") && line("maxAge").hasSuffix("(MAGPIE_MAX_AGE)"))
        #expect(line("quality").contains("70") && line("quality").hasSuffix("(IMGPROXY_QUALITY)"))
        #expect(line("formatQuality").contains("avif=40,webp=60"))
        #expect(line("maxPixels").contains("12500000") && line("maxPixels").hasSuffix("(IMGPROXY_MAX_SRC_RESOLUTION)"))
        #expect(line("host").contains("0.0.0.0") && line("port").contains("9090"))
        #expect(line("preset").contains("thumb=rs:fill:100:100/q:60"))
        #expect(line("enforceWebp").contains("true") && line("etag").contains("false"))
        #expect(line("key").contains("1 key(s)") && line("key").hasSuffix("(IMGPROXY_KEY)"))
        #expect(line("workers").contains("3") && line("workers").hasSuffix("(flag --workers)"))
        #expect(line("memoryCacheSize").hasSuffix("(default)"))
        #expect(run.stdout.contains("ignored: IMGPROXY_READ_TIMEOUT"))
        #expect(!run.stdout.contains(ServerFixture.key))
    }

    @Test func anImgproxyDeploymentsKeysAndWatermarkWorkAsTheyAre() async throws {
        let root = try localRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let mark = root.appendingPathComponent("mark.png")
        try ImageCoderRegistry.shared.encode(Image(pixels: try PixelBuffer(width: 4, height: 4, fill: RGBAColor(red: 255, green: 0, blue: 0))), as: .png)
            .write(to: mark)
        let served = try Served(
            arguments: ["--local-root", root.path, "--cache-dir", root.appendingPathComponent("cache").path],
            environment: ["IMGPROXY_KEY": ServerFixture.key, "IMGPROXY_SALT": ServerFixture.salt, "IMGPROXY_WATERMARK_PATH": mark.path])
        let signer = try ImageURLSigner(hexPairs: [(key: ServerFixture.key, salt: ServerFixture.salt)])
        let path = "/rs:fill:20:15/wm:1:ce/plain/local%3A%2F%2F%2Fphoto.jpg@png"
        let answer = try await served.get("/" + signer.signature(forPath: path) + path)
        #expect(served.stop() == 0)
        #expect(answer.status == 200)
        let image = try ImageCoderRegistry.shared.decode(answer.body)
        #expect(image.pixelSize == PixelSize(width: 20, height: 15))
        let centre = (7 * 20 + 10) * 4
        #expect(Array(image.pixels.rgbaBytes[centre..<centre + 3]) == [255, 0, 0])
    }
}
