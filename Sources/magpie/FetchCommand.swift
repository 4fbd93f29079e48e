import ArgumentParser
import Foundation
import Magpie

/// `magpie fetch URL...`: fetch images through the cache and one downloader, concurrently
/// (repeated URLs share one request), reporting where each came from.
struct FetchCommand: AsyncParsableCommand, RetrievalCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch", abstract: "Fetch images through the caches, the downloader and optional processors.",
        discussion: "Processor specs (--processor):\n" + ImageProcessorSpec.grammar)

    @Argument(help: "http(s), file: or data: URLs (a plain path is read as a file).")
    var urls: [String]

    @OptionGroup var global: GlobalOptions

    @OptionGroup var namedCache: NamedCacheOptions

    @Option(name: .customLong("out"), help: "Write each image's bytes into this folder.")
    var outDirectory: String?

    @Flag(name: .customLong("force-refresh"), help: "Download even when cached.")
    var forceRefresh = false

    @Flag(name: .customLong("only-from-cache"), help: "Never download; a miss is an error.")
    var onlyFromCache = false

    @Flag(help: "Ask the server whether cached entries with an ETag or Last-Modified changed (304 keeps them).")
    var revalidate = false

    @OptionGroup var processing: ProcessingChainOptions

    @Flag(name: .customLong("cache-original"), help: "With a processor, also keep the downloaded bytes in the cache.")
    var cacheOriginal = false

    @OptionGroup var policy: RetrievalPolicyOptions

    @Flag(help: """
        One JSON object per URL: url, cacheType, served (fresh, revalidated, stale, downloaded), revalidated, bytes, ms, \
        width, height, frames (or url, error).
        """)
    var json = false

    func validate() throws {
        guard !(forceRefresh && onlyFromCache) else { throw ValidationError("--force-refresh and --only-from-cache exclude each other") }
        guard !(revalidate && onlyFromCache) else { throw ValidationError("--revalidate and --only-from-cache exclude each other") }
    }

    func run() async throws {
        global.bootstrapLogging()
        let cache = namedCache.openCache()
        if let error = cache.diskError {
            report(["error": "\(error)"], line: "fetch: \(error)")
            throw ExitCode(1)
        }
        let manager = makeManager(cache: cache)
        // The process exits right after: disk writes must be finished before a result is reported.
        var options: [MagpieOption] = [.waitForCache]
        if cacheOriginal { options.append(.cacheOriginalImage) }
        if onlyFromCache { options.append(.onlyFromCache) }
        if revalidate { options.append(.revalidate) }
        options += try retrievalOptions()
        if let outDirectory {
            do {
                try FileManager.default.createDirectory(atPath: outDirectory, withIntermediateDirectories: true)
            } catch {
                report(["error": "cannot create \(outDirectory): \(fileErrorReason(error, path: outDirectory))"],
                       line: "fetch: cannot create the folder \(outDirectory): \(fileErrorReason(error, path: outDirectory))")
                throw ExitCode(1)
            }
        }

        let output = Output(json: json, outDirectory: outDirectory, processed: processing.isProcessing)
        let chosen = options
        let failures = await withTaskGroup(of: Bool.self) { group in
            for text in urls {
                group.addTask { await output.fetch(text, manager: manager, cache: cache, options: chosen) }
            }
            return await group.reduce(0) { $0 + ($1 ? 0 : 1) }
        }
        // The results are printed already; what runs in the background still has to finish.
        await shutDown(manager)
        if failures > 0 { throw ExitCode(1) }
    }

    func report(_ object: [String: Any?], line: String) {
        Output(json: json, outDirectory: nil).report(object, line: line)
    }

    /// A URL from an argument: a URL with a scheme, or a path to a file.
    static func url(from text: String) throws -> URL {
        if text.hasPrefix("data:") || text.contains("://"), let url = URL(string: text) { return url }
        if text.hasPrefix("/") || text.hasPrefix(".") || FileManager.default.fileExists(atPath: text) {
            return URL(fileURLWithPath: text)
        }
        throw MagpieError.requestFailed(reason: .invalidURL(text))
    }
}

/// How `fetch` reports and saves results (a Sendable copy of the options the tasks need).
private struct Output: Sendable {
    let json: Bool
    let outDirectory: String?
    /// Whether results are processed images (written encoded) rather than the bytes as downloaded.
    var processed = false

    /// Fetches one URL and prints its line; false when it failed.
    func fetch(_ text: String, manager: ImageManager, cache: ImageCache, options: [MagpieOption]) async -> Bool {
        let started = ContinuousClock.now
        do {
            let url = try FetchCommand.url(from: text)
            let result = try await manager.retrieveImage(with: url, options: options)
            let ms = Units.ms(ContinuousClock.now - started)
            if let outDirectory { try await write(result, url: url, to: outDirectory) }
            let bytes = result.downloadMetrics?.bytesReceived ?? 0
            // A file or data: URL is read, not downloaded: "from the network, 0 bytes downloaded" would be wrong twice.
            let origin: String
            switch (result.cacheType, url.scheme?.lowercased()) {
            case (.none, "file"): origin = "from file"
            case (.none, "data"): origin = "from the data: URL"
            case (.none, _): origin = "from the network\(result.revalidated ? " (revalidated: 304)" : ""), \(bytes) bytes downloaded"
            default: origin = "from the \(result.cacheType) cache\(Self.servedNote(result.served))"
            }
            var object: [String: Any?] = [
                "url": text, "cacheType": "\(result.cacheType)", "served": "\(result.served)",
                "revalidated": result.revalidated, "bytes": bytes,
                "ms": (ms * 10).rounded() / 10, "width": result.image.width, "height": result.image.height,
                "frames": result.image.frames.count,
            ]
            if case .stale(let reason) = result.served { object["staleReason"] = .some(reason.rawValue) }
            report(object, line: "\(text): \(result.image.width)x\(result.image.height), \(result.image.frames.count) frame(s), "
                + "\(origin), \(String(format: "%.1f", ms)) ms")
            return true
        } catch {
            report(["url": text, "error": "\(error)"], line: failureLine(for: text, error: error))
            return false
        }
    }

    /// How a cache hit was served, for the text line.
    static func servedNote(_ served: RetrieveImageResult.Served) -> String {
        switch served {
        case .revalidated: " (revalidated: 304)"
        case .stale(.whileRevalidating): " (stale, revalidating in the background)"
        case .stale(.revalidationFailed): " (stale: the revalidation failed)"
        case .fresh, .downloaded: ""
        }
    }

    /// The bytes as downloaded or cached (or, for processed images, the image encoded as the
    /// cache would store it), written under the URL's last path component with the extension of
    /// the bytes' format.
    private func write(_ result: RetrieveImageResult, url: URL, to folder: String) async throws {
        let data: Data
        if processed {
            data = try DefaultCacheSerializer.default.data(with: result.image, original: nil)
        } else if let bytes = await result.data() {
            data = bytes
        } else {
            return
        }
        var name = url.lastPathComponent.isEmpty || url.scheme == "data" ? "image" : url.lastPathComponent
        let format = data.mg.imageFormat
        let named = URL(fileURLWithPath: name)
        if ImageFormat(fileExtension: named.pathExtension) != format {
            name = named.deletingPathExtension().lastPathComponent + "." + format.fileExtension
        }
        try data.write(to: URL(fileURLWithPath: folder).appendingPathComponent(name), options: .atomic)
    }

    func report(_ object: [String: Any?], line: String) {
        if json { print(jsonLine(object)) } else if object["error"] != nil { printError(line) } else { print(line) }
    }
}
