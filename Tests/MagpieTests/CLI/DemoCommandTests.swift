import Foundation
import Testing

@testable import Magpie
@testable import MagpieCore

/// `magpie demo` as a subprocess: the embedded origin, every step, the report, the files it leaves.
struct DemoCommandTests {
    /// Runs `magpie` on a dispatch thread: the demo takes seconds and must not hold a cooperative thread.
    func magpie(_ arguments: [String]) async throws -> ProcessRun {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try ProcessRun.built("magpie", arguments) }) }
        }
    }

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func demoJSONReportsEveryLayerTheSharingAndTheCorruptFilesErrorAndLeavesThumbnailsAndACache() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try await magpie(["demo", "--json", "--out", folder.path, "--burst", "8"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 1, "--json prints one object and nothing else on stdout")
        let report = try #require(try JSONSerialization.jsonObject(with: Data((lines.last ?? "").utf8)) as? [String: Any])
        #expect(Set(report.keys) == [
            "answeredBy", "originRequests", "dedupeHits", "coalesced", "failedFast", "processingRuns", "errors", "thumbnails",
            "problems", "ms",
        ])
        let layers = try #require(report["answeredBy"] as? [String: [String: Any]])
        #expect(Set(layers.keys) == ["memory", "disk", "network", "joined", "revalidated", "failed"])
        for (name, layer) in layers {
            #expect(Set(layer.keys) == ["retrievals", "bytes", "avgMs"], "\(name)")
        }
        func count(_ layer: String) -> Int { layers[layer]?["retrievals"] as? Int ?? -1 }
        // Ten good images: step 3 serves nine from memory (the corrupt one fails fast), step 4 nine from disk.
        #expect(count("memory") >= 9)
        #expect(count("disk") >= 9)
        // Step 5: eight unchanged images confirmed by 304 (counted there only), the changed badge downloaded again.
        #expect(count("revalidated") == 8)
        #expect((layers["network"]?["bytes"] as? Int ?? 0) > 1_000_000)
        // Each retrieval counted once: the burst's joined callers are not network retrievals too, and the sum is
        // every retrieval the demo recorded (12 prefetched, the burst's 8, 10 in each of steps 3 to 5; the three
        // processors over one URL only show the download they share).
        #expect(count("joined") >= 7)
        #expect(layers.values.reduce(0) { $0 + ($1["retrievals"] as? Int ?? 0) } == 12 + 8 + 30)
        #expect(count("failed") >= 3, "the corrupt sample, in steps 1, 3, 4 and 5")
        // The burst of 8 identical requests: one retrieval, seven joined it.
        #expect((report["coalesced"] as? Int ?? 0) >= 7)
        // Three processors over one URL share one download.
        #expect((report["dedupeHits"] as? Int ?? 0) >= 2)
        #expect((report["failedFast"] as? Int ?? 0) >= 2)
        let errors = try #require(report["errors"] as? [[String: String]])
        #expect(errors.count == 1)
        #expect(errors.first?["name"] == "corrupt.jpg")
        #expect(errors.first?["error"]?.contains("truncated JPEG") == true)
        #expect((report["problems"] as? [String])?.isEmpty == true)
        #expect(report["thumbnails"] as? Int == 10)

        // The thumbnails are real images made with the default chain (fit in 160x160, rounded corners).
        let thumbs = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("thumbs").path).sorted()
        #expect(thumbs.count == 10)
        #expect(thumbs.contains("spinner.gif") && thumbs.contains("wide.png") && !thumbs.contains { $0.hasPrefix("corrupt") })
        let wide = try ImageCoderRegistry.shared.decode(Data(contentsOf: folder.appendingPathComponent("thumbs/wide.png")))
        #expect(wide.width == 160 && wide.height == 53)
        #expect(wide.frames[0].pixels[0, 0].alpha == 0, "a rounded corner is transparent")
        let spinner = try ImageCoderRegistry.shared.decode(Data(contentsOf: folder.appendingPathComponent("thumbs/spinner.gif")))
        #expect(spinner.frames.count == 8)

        // The cache it filled is intact and readable by the cache command.
        let stats = try await magpie(["cache", "stats", "--json", "--cache-dir", folder.appendingPathComponent("cache").path, "--name", "demo"])
        let cache = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        #expect(stats.status == 0)
        #expect((cache?["entries"] as? Int ?? 0) >= 11)
    }

    @Test func demoTextOutputShowsEveryStepAndThePerLayerTableWithoutColourWhenPiped() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try await magpie(["demo", "--out", folder.path, "--burst", "4", "--concurrency", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        for step in ["1. prefetch", "2. burst", "3. again", "4. new manager", "5. revalidate", "6. thumbnails"] {
            #expect(run.stdout.contains(step), "\(step)")
        }
        let header = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("answered by") })
        #expect(header.split(separator: " ", omittingEmptySubsequences: true) == ["answered", "by", "retrievals", "bytes", "avg", "time"])
        for row in ["memory", "disk", "network", "joined a running retrieval", "revalidated (304)", "failed", "total"] {
            #expect(run.stdout.split(separator: "\n").contains { $0.hasPrefix(row + " ") }, "\(row)")
        }
        #expect(run.stdout.contains("error corrupt.jpg: ") && run.stdout.contains("truncated JPEG"))
        #expect(!run.stdout.contains("\u{1B}["), "no escapes when stdout is not a terminal")
        // Not a terminal: the progress bar's plain lines, no carriage-return redraws.
        #expect(!run.stderr.contains("\r"))
    }

    @Test func demoUsageErrorsExitTwoAndAnUnwritableOutputFolderExitsOneWithOneLine() async throws {
        #expect(try await magpie(["demo", "--concurrency", "0"]).status == 2)
        #expect(try await magpie(["demo", "--processor", "resize:big"]).status == 2)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: file)
        let run = try await magpie(["demo", "--out", file.path])
        #expect(run.status == 1)
        let errorLines = run.stderr.split(separator: "\n")
        #expect(errorLines.count == 1 && errorLines[0].hasPrefix("demo: "), "\(run.stderr)")
    }
}
