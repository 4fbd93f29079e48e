import ArgumentParser
import Dispatch
import Foundation
import Magpie
import Synchronization

/// `magpie prefetch (--list FILE | URL...)`: warm a cache with many images through `ImagePrefetcher`,
/// with a progress bar, a summary, and a clean stop on Ctrl-C.
struct PrefetchCommand: AsyncParsableCommand, RetrievalCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch", abstract: "Download many images into a cache, N at a time, with progress.",
        discussion: """
            URLs already cached are skipped without a download (unless --force-refresh); repeated URLs are \
            prefetched once, and the summary says how many were dropped. Progress goes to stderr: a bar \
            redrawn in place on a terminal, else a plain line at most once a second. The summary goes to stdout.

            Ctrl-C stops the prefetch: running downloads are cancelled and count as failed with everything \
            not started, the summary is still printed, and the exit status is 130. A second Ctrl-C exits at once. \
            What was cached stays whole: entries are written to a temporary file and renamed into place.

            Exit status: 0 all completed or skipped, 1 some failed, 2 usage error, 130 interrupted.

            Processor specs (--processor):

            """ + ImageProcessorSpec.grammar)

    @Argument(help: "http(s), file: or data: URLs (a plain path is read as a file).")
    var urls: [String] = []

    @Option(name: .customLong("list"), help: ArgumentHelp(
        "Read URLs from this file, one a line; blank lines and lines starting with # are ignored. - reads stdin.",
        valueName: "file"))
    var list: String?

    @OptionGroup var global: GlobalOptions

    @OptionGroup var namedCache: NamedCacheOptions

    @Option(help: "How many images are retrieved at once (1...256).")
    var concurrency = 8

    @OptionGroup var processing: ProcessingChainOptions

    @Flag(name: .customLong("force-refresh"), help: "Download even what is cached.")
    var forceRefresh = false

    @OptionGroup var policy: RetrievalPolicyOptions

    @Flag(help: """
        One JSON object per line on stdout. Per URL, as it finishes: url, status (completed, skipped or failed), \
        ms (since the start), then width and height (completed), cacheType (skipped: memory or disk) or error \
        (failed). Last, the summary: completed, skipped, failed, duplicates (repeated URLs dropped), ms (total), all numbers.
        """)
    var json = false

    func validate() throws {
        guard urls.isEmpty != (list == nil) else {
            throw ValidationError(urls.isEmpty ? "give URLs or --list FILE" : "give URLs or --list FILE, not both")
        }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 256") }
    }

    func run() async throws {
        global.bootstrapLogging()
        let texts = try inputs()
        var sources: [Source] = []
        var names: [String: String] = [:]
        var invalid: [(String, MagpieError)] = []
        var duplicates = 0
        for text in texts {
            do {
                let source = try FetchCommand.url(from: text).convertToSource()
                guard names[source.cacheKey] == nil else {
                    duplicates += 1
                    continue
                }
                names[source.cacheKey] = text
                sources.append(source)
            } catch {
                invalid.append((text, error as? MagpieError ?? .requestFailed(reason: .invalidURL(text))))
            }
        }

        // A prefetch never reads an image back from memory (the list is deduplicated first), so the memory cache only
        // needs to serve the run's own coalescing: with the default (a quarter of RAM) the soak's peak RSS grew by
        // ~600 KB per URL of the list.
        let cache = namedCache.openCache(memoryLimit: 16 << 20)
        if let error = cache.diskError {
            printError("prefetch: \(error)")
            throw ExitCode(1)
        }
        // --concurrency is the number of parallel downloads, also to a single host.
        let manager = makeManager(cache: cache, concurrency: concurrency)
        let prefetcher = ImagePrefetcher(sources: sources, options: try retrievalOptions(), manager: manager)
        prefetcher.maxConcurrentDownloads = concurrency
        let outcomes = prefetcher.outcomes
        let bar = ProgressBar(total: sources.count + invalid.count, title: "prefetch", style: global.style(for: .standardError))
        var report = PrefetchReport(json: json, bar: bar, started: .now)
        report.duplicates = duplicates
        for (text, error) in invalid { report.recordFailure(url: text, error: error) }

        let interrupts = InterruptWatch(onFirst: { prefetcher.stop() }, onSecond: { bar.finish() })
        prefetcher.start()
        for await outcome in outcomes {
            report.record(outcome, url: names[outcome.source.cacheKey] ?? outcome.source.url?.absoluteString ?? "?")
        }
        let interrupted = interrupts.interrupted
        report.finish(interrupted: interrupted)
        await shutDown(manager)
        // Still watching: a Ctrl-C during the shutdown is a second one and exits at once.
        withExtendedLifetime(interrupts) {}
        if interrupted { throw ExitCode(130) }
        if report.failed > 0 { throw ExitCode(1) }
    }

    /// The URL arguments, or the lines of the --list file (stdin for `-`) that are not blank or comments.
    private func inputs() throws -> [String] {
        guard let list else { return urls }
        let data: Data
        if list == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: list))
            } catch {
                printError("prefetch: cannot read the list \(list): \(fileErrorReason(error, path: list))")
                throw ExitCode(1)
            }
        }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

/// Turns Ctrl-C into a clean stop: the first SIGINT calls `onFirst`, a second one calls
/// `onSecond` and exits at once with status 130.
private final class InterruptWatch {
    private let source: any DispatchSourceSignal
    private let count: SignalCount

    init(onFirst: @escaping @Sendable () -> Void, onSecond: @escaping @Sendable () -> Void) {
        let count = SignalCount()
        self.count = count
        // Ignored at the process level so that only the dispatch source sees it.
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            if count.increment() == 1 {
                onFirst()
            } else {
                onSecond()
                Foundation.exit(130)
            }
        }
        source.resume()
    }

    /// True once SIGINT arrived.
    var interrupted: Bool { count.value > 0 }

    deinit { source.cancel() }
}

/// How many SIGINTs arrived.
private final class SignalCount: Sendable {
    private let count = Atomic(0)

    /// Adds one and returns the new count.
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }

    var value: Int { count.load(ordering: .relaxed) }
}
