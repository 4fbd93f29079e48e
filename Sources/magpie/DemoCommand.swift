import ArgumentParser
import Foundation
import Magpie
import MagpieOrigin

/// `magpie demo`: Magpie's main job end to end against an embedded image origin on 127.0.0.1.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the whole pipeline against an embedded image origin on 127.0.0.1 and report per layer.",
        discussion: """
            Generates sample images (JPEG, PNG, WebP, animated GIF/APNG/WebP, a slow one, a corrupt one), serves \
            them on a random loopback port, then: prefetches them with a processor chain into a fresh cache \
            (progress bar), sends a burst of identical requests, fetches everything again (memory hits), again \
            through a second manager (disk hits, as a new process would), revalidates (304s; one image changed \
            upstream), writes the thumbnails, and prints a table per layer. Needs no network beyond loopback.
            Exit status: 0 when every step did what it should (the corrupt image failing with a typed error), 1 otherwise.
            """)

    @OptionGroup var global: GlobalOptions

    @OptionGroup var cacheFolder: CacheFolderOptions

    @Option(name: .customLong("out"), help: "Folder for the thumbnails and, without --cache-dir, the cache (emptied first).")
    var outDirectory = "magpie-demo"

    @Option(help: "The processor chain the thumbnails are made with.")
    var processor = "resize:160x160:fit|round:12"

    @Option(help: "How many images are prefetched at once (1-64).")
    var concurrency = 4

    @Option(help: "How many identical requests the burst step sends at once (1-1000).")
    var burst = 20

    @Flag(help: "Print one JSON object at the end instead of text: answeredBy{memory,disk,network,joined,revalidated,failed: retrievals, bytes, avgMs} (each retrieval counted once), originRequests, dedupeHits, coalesced, failedFast, errors[{name, error}], thumbnails, ms.")
    var json = false

    func validate() throws {
        guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 64") }
        guard (1...1000).contains(burst) else { throw ValidationError("--burst must be between 1 and 1000") }
        _ = try processorOption(processor)
    }

    func run() async throws {
        global.bootstrapLogging()
        let started = ContinuousClock.now
        let out = URL(fileURLWithPath: outDirectory)
        let cacheRoot = cacheFolder.cacheDirectory.map { URL(fileURLWithPath: $0) } ?? out.appendingPathComponent("cache")
        let style = global.style(for: .standardOutput)
        let quiet = json
        // Unbuffered, so step lines (stdout) and progress lines (stderr) stay in order when piped together.
        let say: @Sendable (String) -> Void = { line in if !quiet { Terminal.write(line + "\n", to: .standardOutput) } }
        let samples: [DemoSample]
        let origin: ImageOrigin
        for folder in [out, cacheRoot] {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                printError("demo: cannot create the folder \(folder.path): \(fileErrorReason(error, path: folder.path))")
                throw ExitCode(1)
            }
        }
        do {
            try? FileManager.default.removeItem(at: out.appendingPathComponent("thumbs"))
            try? FileManager.default.removeItem(at: cacheRoot.appendingPathComponent("demo"))
            samples = try DemoSamples.make()
            origin = try await ImageOrigin.start(assets: Dictionary(uniqueKeysWithValues: samples.map { ($0.name, $0.asset) }))
        } catch {
            printError("demo: could not start: \(error)")
            throw ExitCode(1)
        }
        let run = DemoRun(
            origin: origin, samples: samples, cacheRoot: cacheRoot, processor: try processorOption(processor)!,
            concurrency: concurrency, style: style, say: say)
        let report: DemoReport
        do {
            report = try await perform(run, out: out, style: style)
        } catch {
            await origin.stop()
            try? await run.downloader.shutdown()
            printError("demo: \(error)")
            throw ExitCode(1)
        }
        await origin.stop()
        try? await run.downloader.shutdown()
        let elapsed = Units.ms(ContinuousClock.now - started)
        if json {
            Terminal.write(jsonLine(report.json(ms: elapsed)) + "\n", to: .standardOutput)
        } else {
            for line in report.lines(style: style, ms: elapsed) { say(line) }
        }
        if !report.problems.isEmpty {
            for problem in report.problems { printError("demo: \(problem)") }
            throw ExitCode(1)
        }
    }

    private func perform(_ run: DemoRun, out: URL, style: TextStyle) async throws -> DemoReport {
        let say = run.say
        say(style.bold("Magpie demo") + ": \(run.samples.count) generated images served on \(run.origin.baseURL), cache in \(run.cacheRoot.path)")
        for sample in run.samples { say("  \(sample.name.padding(toLength: 13, withPad: " ", startingAt: 0)) \(sample.kind), \(Units.bytes(sample.asset.bytes.count))") }

        let first = run.makeManager()
        say(style.bold("1. prefetch") + " \(run.mainSet.count + 2) URLs (photo.jpg three times) with \"\(processor)\", \(concurrency) at once:")
        let summary = await run.prefetch(manager: first)
        say("   \(summary.completed.count) completed, \(summary.skipped.count) skipped, \(summary.failed.count) failed in \(Units.milliseconds(Units.ms(summary.elapsed)))")

        let before = run.origin.totalRequests
        say(style.bold("2. burst") + ": \(burst) identical requests for poster.jpg at once, then 3 different processors over wide.jpg")
        await run.burst(manager: first, callers: burst)
        say("   the origin saw \(run.origin.totalRequests - before) requests; \(first.statistics.coalesced) callers joined another's retrieval")

        say(style.bold("3. again") + ", same manager: from memory")
        await run.retrieve(run.mainSet, manager: first, phase: .memory)
        say("   " + run.tally(.memory).summary)

        let second = run.makeManager()
        say(style.bold("4. new manager") + " on the same folder (as a new process would): from disk")
        await run.retrieve(run.mainSet, manager: second, phase: .disk)
        say("   " + run.tally(.disk).summary)

        run.origin.setAsset(try DemoSamples.changedBadge(), forName: "badge.png")
        say(style.bold("5. revalidate") + " (badge.png changed upstream): conditional requests with the stored ETags")
        await run.retrieve(run.mainSet, manager: second, phase: .revalidate, options: [.revalidate], concurrently: true)
        say("   " + run.tally(.revalidate).summary)

        let thumbs = out.appendingPathComponent("thumbs")
        let written = try await run.writeThumbnails(manager: second, to: thumbs)
        say(style.bold("6. thumbnails") + ": \(written.count) files in \(thumbs.path)")
        return DemoReport(run: run, managers: [first, second], thumbnails: written)
    }
}
