import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

/// `magpie prefetch` as a subprocess against a local origin.
struct PrefetchCommandTests {
    /// Runs `magpie` to the end off the cooperative pool, feeding it `input` on stdin.
    func magpie(_ arguments: [String], input: Data? = nil) async throws -> ProcessRun {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try Self.run(arguments, input: input) }) }
        }
    }

    private static func run(_ arguments: [String], input: Data?) throws -> ProcessRun {
        let process = Process()
        process.executableURL = try BuiltProducts.executable("magpie")
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(input)
            try stdin.fileHandleForWriting.close()
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessRun(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                          stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The JSON objects of `stdout`, one a line: those with a `url`, then the last line (the summary).
    static func objects(_ stdout: String) -> (items: [[String: Any]], summary: [String: Any]) {
        let all = stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (all.filter { $0["url"] != nil }, all.last.flatMap { $0["url"] == nil ? $0 : nil } ?? [:])
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-prefetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `count` distinct gradient PNGs named `g0.png`, `g1.png`, … (40×30 and up).
    static func gradients(_ count: Int) throws -> [String: OriginAsset] {
        var assets: [String: OriginAsset] = [:]
        for index in 0..<count {
            let image = Image(pixels: try TestImages.gradient(width: 40 + index, height: 30 + index))
            let bytes = try ImageCoderRegistry.shared.encode(image, as: .png)
            assets["g\(index).png"] = OriginAsset(bytes: [UInt8](bytes), contentType: "image/png")
        }
        return assets
    }

    @Test func prefetchCompletesThenSkipsWhatIsCachedThenForceRefreshes() async throws {
        let count = 6
        let origin = try await OriginFixture.start(extra: try Self.gradients(count))
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let paths = (0..<count).map { "/img/g\($0).png" }
        let urls = paths.map(origin.url)
        let command = ["prefetch", "--json", "--concurrency", "4", "--processor", "resize:32x32:fit", "--cache-dir", folder.path] + urls

        let first = try await magpie(command)
        #expect(first.status == 0)
        var (items, summary) = Self.objects(first.stdout)
        #expect(items.count == count)
        #expect(Set(items.compactMap { $0["url"] as? String }) == Set(urls))
        for item in items {
            #expect(item["status"] as? String == "completed")
            let width = item["width"] as? Int ?? 0, height = item["height"] as? Int ?? 0
            #expect(width > 0 && width <= 32 && height > 0 && height <= 32 && max(width, height) == 32)
        }
        #expect(Set(summary.keys) == ["completed", "skipped", "failed", "duplicates", "ms"])
        #expect(summary["completed"] as? Int == count && summary["skipped"] as? Int == 0 && summary["failed"] as? Int == 0)
        #expect(summary["ms"] is NSNumber)
        #expect(paths.allSatisfy { origin.requestCount(path: $0) == 1 })

        let requests = origin.totalRequests
        let second = try await magpie(command)
        #expect(second.status == 0)
        (items, summary) = Self.objects(second.stdout)
        #expect(items.count == count)
        #expect(items.allSatisfy { $0["status"] as? String == "skipped" && $0["cacheType"] as? String == "disk" })
        #expect(summary["skipped"] as? Int == count && summary["completed"] as? Int == 0)
        #expect(origin.totalRequests == requests)

        let third = try await magpie(command + ["--force-refresh"])
        #expect(third.status == 0)
        (items, summary) = Self.objects(third.stdout)
        #expect(items.count == count && items.allSatisfy { $0["status"] as? String == "completed" })
        #expect(summary["completed"] as? Int == count)
        #expect(paths.allSatisfy { origin.requestCount(path: $0) == 2 })
        await origin.stop()
    }

    @Test func failuresNameTheURLsProblemCountInTheSummaryAndExitOne() async throws {
        let origin = try await OriginFixture.start()
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = origin.url("/img/pic.png"), missing = origin.url("/img/missing.png")
        let corrupt = origin.url("/img/corrupt.png"), truncated = origin.url("/truncate/noise.png?bytes=1000")
        let urls = [good, missing, corrupt, truncated]

        let run = try await magpie(["prefetch", "--json", "--cache-dir", folder.path] + urls)
        #expect(run.status == 1)
        let (items, summary) = Self.objects(run.stdout)
        #expect(items.count == 4)
        let failures = Dictionary(uniqueKeysWithValues: items.filter { $0["status"] as? String == "failed" }.map {
            ($0["url"] as? String ?? "", $0)
        })
        #expect(Set(failures.keys) == [missing, corrupt, truncated])
        #expect(failures.values.allSatisfy { Set($0.keys) == ["url", "status", "ms", "error"] })
        #expect((failures[missing]?["error"] as? String)?.contains("404") == true)
        #expect((failures[corrupt]?["error"] as? String)?.contains("corrupt") == true)
        #expect((failures[truncated]?["error"] as? String)?.contains("truncated") == true)
        #expect(summary["completed"] as? Int == 1 && summary["failed"] as? Int == 3 && summary["skipped"] as? Int == 0)

        let human = try await magpie(["prefetch", "--cache-dir", folder.path] + urls)
        #expect(human.status == 1)
        let lines = human.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("prefetch: 0 completed, 1 skipped, 3 failed in ") == true)
        #expect(lines.contains { $0 == "  bad response: HTTP 404 from \(missing)" })
        #expect(lines.contains { $0.contains(corrupt) && $0.contains("corrupt") })
        #expect(lines.count == 4)
        // Each listed error names its URL once, whether the error's text has it or the line adds it.
        for (line, url) in [missing, corrupt, truncated].compactMap({ url in lines.first { $0.contains(url) }.map { ($0, url) } }) {
            #expect(line.components(separatedBy: url).count == 2, "\(line)")
        }
        await origin.stop()
    }

    @Test func retryRetriesTransientFailuresOnlyAndOnlyWhenAsked() async throws {
        let origin = try await OriginFixture.start()
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let flaky = origin.url("/flaky/pic.png?failures=2&code=503"), missing = origin.url("/status/404")
        let retried = try await magpie(
            ["prefetch", "--json", "--retry", "2", "--retry-wait", "0.05", "--cache-dir", folder.path, flaky, missing])
        let status = Dictionary(uniqueKeysWithValues: Self.objects(retried.stdout).items.map {
            ($0["url"] as? String ?? "", $0["status"] as? String ?? "")
        })
        #expect(retried.status == 1)
        #expect(status == [flaky: "completed", missing: "failed"])
        #expect(origin.requestCount(path: "/flaky/pic.png") == 3)
        // A 404 is not transient: one request however many retries are allowed.
        #expect(origin.requestCount(path: "/status/404") == 1)

        // Without --retry the first 503 is the outcome.
        let once = origin.url("/flaky/photo.jpg?failures=1&code=503")
        let plain = try await magpie(["prefetch", "--json", "--cache-dir", folder.path, once])
        #expect(plain.status == 1)
        #expect((Self.objects(plain.stdout).items.first?["error"] as? String)?.contains("503") == true)
        #expect(origin.requestCount(path: "/flaky/photo.jpg") == 1)
        // `fetch` takes the same options.
        let fresh = origin.url("/flaky/noise.png?failures=1&code=502")
        let fetched = try await magpie(["fetch", "--json", "--retry", "1", "--retry-wait", "0", "--cache-dir", folder.path, fresh])
        #expect(fetched.status == 0, "\(fetched.stdout)\(fetched.stderr)")
        #expect(origin.requestCount(path: "/flaky/noise.png") == 2)
        #expect(try await magpie(["prefetch", "--retry", "11", once]).status == 2)
        #expect(try await magpie(["fetch", "--retry-wait", "-1", once]).status == 2)
        await origin.stop()
    }

    @Test func listFileSkipsCommentsAndBlanksAndDashReadsStdin() async throws {
        let origin = try await OriginFixture.start()
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("urls.txt")
        let text = "# images\n\n  \(origin.url("/img/pic.png"))  \n#\(origin.url("/img/noise.png"))\n\(origin.url("/img/photo.jpg"))\n\n"
        try Data(text.utf8).write(to: list)

        let run = try await magpie(["prefetch", "--json", "--cache-dir", folder.path, "--list", list.path])
        #expect(run.status == 0)
        let (items, summary) = Self.objects(run.stdout)
        #expect(Set(items.compactMap { $0["url"] as? String }) == [origin.url("/img/pic.png"), origin.url("/img/photo.jpg")])
        #expect(summary["completed"] as? Int == 2)
        #expect(origin.requestCount(path: "/img/noise.png") == 0)

        let piped = try await magpie(["prefetch", "--json", "--cache-dir", folder.path, "--list", "-"], input: Data(text.utf8))
        #expect(piped.status == 0)
        #expect(Self.objects(piped.stdout).summary["skipped"] as? Int == 2)
        await origin.stop()
    }

    @Test func usageErrorsExitTwoAndAnUnreadableListExitsOne() async throws {
        let url = "http://127.0.0.1:9/x.png"
        #expect(try await magpie(["prefetch"]).status == 2)
        #expect(try await magpie(["prefetch", "--list", "/nonexistent", url]).status == 2)
        let zero = try await magpie(["prefetch", "--concurrency", "0", url])
        #expect(zero.status == 2 && zero.stderr.contains("--concurrency"))
        #expect(try await magpie(["prefetch", "--concurrency", "257", url]).status == 2)
        let processor = try await magpie(["prefetch", "--processor", "resize:32x32|sparkle:3", url])
        #expect(processor.status == 2 && processor.stderr.contains("sparkle:3"))
        let missing = try await magpie(["prefetch", "--list", "/nonexistent/urls.txt"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent/urls.txt"))
        #expect(missing.stderr.split(separator: "\n").count == 1)
    }
}

/// Bytes a subprocess writes to a pipe, collected as they arrive.
private final class Collected: Sendable {
    private let state = Mutex((data: Data(), ended: false))

    /// Reads `pipe` from now on.
    init(_ pipe: Pipe) {
        pipe.fileHandleForReading.readabilityHandler = { [self] handle in
            let data = handle.availableData
            state.withLock { data.isEmpty ? ($0.ended = true) : $0.data.append(data) }
            if data.isEmpty { handle.readabilityHandler = nil }
        }
    }

    var text: String { state.withLock { String(decoding: $0.data, as: UTF8.self) } }
    var ended: Bool { state.withLock { $0.ended } }
}

extension PrefetchCommandTests {
    /// Polls `condition` every 50 ms for up to `seconds`; true once it holds.
    func eventually(within seconds: Int, _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    @Test func sigintStopsCleanlyPrintsTheSummaryExits130AndLeavesOnlyWholeEntries() async throws {
        let origin = try await OriginFixture.start(extra: try Self.gradients(3))
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Three quick images finish first; the slow ones (~65 s each) are mid-transfer when SIGINT comes,
        // so which URLs completed is known exactly.
        let quick = (0..<3).map { origin.url("/img/g\($0).png") }
        let slow = (0..<8).map { origin.url("/slow/noise.png?chunk=1024&delay=250&n=\($0)") }
        let urls = quick + slow
        let process = Process()
        process.executableURL = try BuiltProducts.executable("magpie")
        process.arguments = ["prefetch", "--json", "--concurrency", "4", "--timeout", "300", "--cache-dir", folder.path] + urls
        process.standardInput = FileHandle.nullDevice
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdout = Collected(out), stderr = Collected(err)
        try process.run()

        let quickDone = try await eventually(within: 60) { Self.objects(stdout.text).items.count >= quick.count }
        #expect(quickDone)
        kill(process.processIdentifier, SIGINT)
        let exited = try await eventually(within: 30) { !process.isRunning && stdout.ended }
        try #require(exited, "prefetch did not exit after SIGINT; stderr: \(stderr.text)")
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)

        let (items, summary) = Self.objects(stdout.text)
        #expect(stdout.text.split(separator: "\n").last.map { $0.contains("\"url\"") } == false)
        #expect(Set(summary.keys) == ["completed", "skipped", "failed", "duplicates", "ms"])
        let completed = summary["completed"] as? Int ?? -1, failed = summary["failed"] as? Int ?? -1
        #expect(completed + failed + (summary["skipped"] as? Int ?? -1) == urls.count)
        #expect(completed == quick.count && failed == slow.count)
        #expect(items.count == urls.count)
        let finished = Set(items.filter { $0["status"] as? String == "completed" }.compactMap { $0["url"] as? String })
        #expect(finished == Set(quick))
        #expect(items.filter { $0["status"] as? String == "failed" }.allSatisfy { ($0["error"] as? String)?.contains("cancelled") == true })

        // Nothing half-written: no temporary file left (checked before anything reopens the cache,
        // which would remove them), one entry per completed URL, each readable, the rest plain misses.
        let temporary = folder.appendingPathComponent("default/tmp")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [])
        let stats = try await magpie(["cache", "stats", "--json", "--cache-dir", folder.path])
        let entries = Self.objects(stats.stdout).summary["entries"] as? Int
        #expect(entries == quick.count)
        let check = try await magpie(["fetch", "--only-from-cache", "--json", "--cache-dir", folder.path] + urls)
        #expect(check.status == 1)
        let results = Self.objects(check.stdout).items
        #expect(results.count == urls.count)
        for result in results {
            let url = result["url"] as? String ?? ""
            if quick.contains(url) {
                #expect(result["cacheType"] as? String == "disk", "\(url): \(result)")
            } else {
                #expect((result["error"] as? String)?.contains("not cached") == true, "\(url): \(result)")
            }
        }
        await origin.stop()
    }

    @Test func terminalGetsABarRedrawnInPlaceAndPipesGetPlainLines() async throws {
        let origin = try await OriginFixture.start()
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // About half a second each, one at a time: the bar is drawn between items too.
        let urls = (0..<3).map { origin.url("/slow/noise.png?chunk=32768&delay=60&n=\($0)") }
        let magpie = try BuiltProducts.executable("magpie")
        func pty(_ arguments: [String]) async throws -> (status: Int32, output: String) {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result { try PseudoTerminal.run(magpie, arguments, columns: 60) })
                }
            }
        }

        let colored = try await pty(["prefetch", "--concurrency", "1", "--cache-dir", folder.appendingPathComponent("a").path] + urls)
        #expect(colored.status == 0)
        #expect(colored.output.contains("\r\u{1B}[K"))
        #expect(colored.output.contains("3/3") && colored.output.contains("[") && colored.output.contains("#"))
        #expect(colored.output.contains("prefetch: 3 completed, 0 skipped, 0 failed in "))
        #expect(colored.output.contains("\u{1B}[32m"))
        // Every redraw fits the 60 columns (a wrapped line could not be redrawn in place).
        let drawn = colored.output.components(separatedBy: "\r\u{1B}[K").dropFirst().map {
            $0.replacingOccurrences(of: #"\u{1B}\[[0-9;]*m"#, with: "", options: .regularExpression)
                .components(separatedBy: "\r\n")[0]
        }
        #expect(drawn.count >= 3 && drawn.allSatisfy { $0.count < 60 })

        let plain = try await pty(["prefetch", "--no-color", "--cache-dir", folder.appendingPathComponent("b").path] + urls)
        #expect(plain.status == 0)
        #expect(plain.output.contains("\r\u{1B}[K") && plain.output.contains("3/3"))
        #expect(!plain.output.contains("\u{1B}[3"))

        let piped = try await self.magpie(["prefetch", "--cache-dir", folder.appendingPathComponent("c").path] + urls)
        #expect(piped.status == 0)
        #expect(piped.stderr.contains("prefetch: 3/3 done"))
        #expect(!piped.stderr.contains("\r") && !piped.stderr.contains("\u{1B}"))
        #expect(piped.stdout.hasPrefix("prefetch: 3 completed, 0 skipped, 0 failed in "))
        await origin.stop()
    }
}

extension PrefetchCommandTests {
    @Test func repeatedURLsAreDroppedAndCountedAsDuplicatesInTextAndJSON() async throws {
        let origin = try await OriginFixture.start()
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pic = origin.url("/img/pic.png"), photo = origin.url("/img/photo.jpg")
        let urls = [pic, photo, pic, pic, photo]

        let json = try await magpie(["prefetch", "--json", "--cache-dir", folder.path] + urls)
        #expect(json.status == 0)
        let (items, summary) = Self.objects(json.stdout)
        #expect(items.count == 2)
        #expect(summary["duplicates"] as? Int == 3 && summary["completed"] as? Int == 2)

        let text = try await magpie(["prefetch", "--force-refresh", "--cache-dir", folder.path] + urls)
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("prefetch: 2 completed, 0 skipped, 0 failed, 3 duplicate URL(s) dropped in "), "\(text.stdout)")
        let unique = try await magpie(["prefetch", "--cache-dir", folder.path, pic])
        #expect(!unique.stdout.contains("duplicate"))
        await origin.stop()
    }
}
