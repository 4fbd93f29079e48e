// The measured clients: Magpie's ImageDownloader (bytes, or bytes + decode), curl --parallel, and
// the dedupe run. Each checks every result and throws on the first wrong one.
import Foundation
import Magpie
import MagpieOrigin

#if canImport(Glibc)
import Glibc
#endif

/// The URLs of one origin and the byte count each must return.
struct Workload: Sendable {
    let urls: [URL]
    let sizes: [Int]
}

/// One timed run of one client.
struct Sample {
    var wall: Duration
    /// User + system time of the client: the bench process for Magpie, the curl process for curl.
    var clientCPU: Duration
}

/// The same settings for every Magpie run: 16 downloads at once, all to one host.
func benchDownloader(concurrency: Int) -> ImageDownloader {
    var configuration = ImageDownloader.Configuration()
    configuration.maximumConcurrentDownloads = concurrency
    configuration.maximumConcurrentDownloadsPerHost = concurrency
    return ImageDownloader(name: "net-bench", configuration: configuration)
}

/// All downloads launched at once in a task group (the downloader queues them), on a fresh downloader so every
/// run opens its own connections, as each curl process does. Shutdown is outside the timed part.
func magpieRun(_ workload: Workload, decode: Bool, concurrency: Int) async throws -> Sample {
    let downloader = benchDownloader(concurrency: concurrency)
    let cpuStart = processCPUTime()
    let start = ContinuousClock.now
    let mismatch = try await withThrowingTaskGroup(of: String?.self) { group in
        for (url, size) in zip(workload.urls, workload.sizes) {
            group.addTask {
                if decode {
                    let result = try await downloader.downloadImage(with: url)
                    let image = result.image
                    return result.originalData.count == size && image.width == ImageSet.width && image.height == ImageSet.height
                        ? nil : "\(url): \(result.originalData.count) bytes \(image.width)x\(image.height), expected \(size) bytes"
                }
                let count = try await downloader.downloadData(with: url).data.count
                return count == size ? nil : "\(url): \(count) bytes, expected \(size)"
            }
        }
        // Not stopping at the first mismatch keeps the timing honest; the first one is reported afterwards.
        var first: String?
        for try await case let problem? in group where first == nil { first = problem }
        return first
    }
    let sample = Sample(wall: ContinuousClock.now - start, clientCPU: processCPUTime() - cpuStart)
    try await downloader.shutdown()
    if let mismatch { throw BenchError("Magpie returned the wrong bytes: \(mismatch)") }
    return sample
}

/// The floor of the downloadImage row: the same decodes, launched the same way, from bytes already in memory.
func decodeRun(_ bodies: [Data]) async throws -> Sample {
    let cpuStart = processCPUTime()
    let start = ContinuousClock.now
    let allRight = try await withThrowingTaskGroup(of: Bool.self) { group in
        for body in bodies {
            group.addTask { try ImageCoderRegistry.shared.decode(body).width == ImageSet.width }
        }
        return try await group.allSatisfy { $0 }
    }
    guard allRight else { throw BenchError("decode gave the wrong size") }
    return Sample(wall: ContinuousClock.now - start, clientCPU: processCPUTime() - cpuStart)
}

/// curl with one config file listing every URL; `-w` prints one line per transfer, which is how its byte
/// counts are checked. The wall time includes spawning curl (see `spawnCost`).
struct CurlClient {
    let executable: String
    let version: String
    let configPath: String
    let reportPath: String
    let parallel: Int
    static let writeOut = "%{http_code} %{size_download} %{url_effective}\\n"

    var arguments: [String] { ["-s", "--parallel", "--parallel-max", "\(parallel)", "-K", configPath, "-w", Self.writeOut] }

    init(executable: String, workload: Workload, workDir: String, parallel: Int) async throws {
        self.executable = executable
        self.parallel = parallel
        configPath = workDir + "/curl-urls.conf"
        reportPath = workDir + "/curl-report.txt"
        let lines = workload.urls.map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"\n" }
        try lines.joined().write(toFile: configPath, atomically: true, encoding: .utf8)
        let versionPath = workDir + "/curl-version.txt"
        _ = await waitForExit(try spawn(executable, ["--version"], stdout: versionPath))
        let first = (try? String(contentsOfFile: versionPath, encoding: .utf8))?.split(separator: "\n").first ?? "curl"
        version = first.split(separator: " ").prefix(2).joined(separator: " ")
    }

    func run(_ workload: Workload) async throws -> Sample {
        let start = ContinuousClock.now
        let (code, cpu) = await waitForExit(try spawn(executable, arguments, stdout: reportPath))
        let sample = Sample(wall: ContinuousClock.now - start, clientCPU: cpu)
        guard code == 0 else { throw BenchError("curl exited with \(code)") }
        let report = try String(contentsOfFile: reportPath, encoding: .utf8)
        var received: [String: (status: String, bytes: Int)] = [:]
        for line in report.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3 else { continue }
            received[String(fields[2])] = (String(fields[0]), Int(fields[1]) ?? -1)
        }
        for (url, size) in zip(workload.urls, workload.sizes) {
            guard let got = received[url.absoluteString], got.status == "200", got.bytes == size else {
                throw BenchError("curl: \(url) gave \(received[url.absoluteString].map { "\($0)" } ?? "no transfer"), expected 200 \(size)")
            }
        }
        return sample
    }
}

/// Median wall time of spawning /bin/true and reaping it: the fixed cost inside every curl sample.
func spawnCost() async throws -> Duration {
    var times: [Duration] = []
    for _ in 0..<21 {
        let start = ContinuousClock.now
        _ = await waitForExit(try spawn("/bin/true", []))
        times.append(ContinuousClock.now - start)
    }
    return times.sorted()[times.count / 2]
}

struct DedupeResult {
    let route: String
    let requestsAtOrigin: Int
    let delivered: Int
    let statistics: DownloadStatistics
    let wall: Duration
}

/// `calls` concurrent downloadImage calls for one slow URL on an in-process ImageOrigin, which counts requests.
func dedupeRun(name: String, bytes: [UInt8], calls: Int, concurrency: Int) async throws -> DedupeResult {
    let origin = try await ImageOrigin.start(assets: [name: OriginAsset(bytes: bytes, contentType: "image/jpeg")])
    // 16 KiB chunks 20 ms apart: the response takes ~60 ms, far longer than launching the calls.
    let route = "/slow/\(name)?chunk=16384&delay=20"
    guard let url = URL(string: origin.url(route)) else { throw BenchError("bad URL \(route)") }
    let downloader = benchDownloader(concurrency: concurrency)
    let start = ContinuousClock.now
    let delivered = try await withThrowingTaskGroup(of: Bool.self) { group in
        for _ in 0..<calls {
            group.addTask {
                let result = try await downloader.downloadImage(with: url)
                return result.originalData.count == bytes.count && result.image.width == ImageSet.width
            }
        }
        return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    let wall = ContinuousClock.now - start
    let result = DedupeResult(
        route: route, requestsAtOrigin: origin.requestCount(path: "/slow/\(name)"), delivered: delivered,
        statistics: downloader.statistics, wall: wall)
    try await downloader.shutdown()
    await origin.stop()
    guard delivered == calls else { throw BenchError("dedupe: \(delivered) of \(calls) results had the right image") }
    return result
}

/// CPU time (user + system) of this whole process so far.
func processCPUTime() -> Duration {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
}

/// The pipeline end to end: an `ImagePrefetcher` with a resize processor over a fresh manager.
/// Cold: the cache folder is emptied first, so every image is downloaded, decoded, resized to fit
/// 256×256, encoded and written to disk (`waitForCache`). Warm: a new manager (empty memory) over
/// the folder the cold run filled, so every image is found on disk and skipped.
func prefetchRun(_ workload: Workload, cacheFolder: String, concurrency: Int, warm: Bool) async throws -> Sample {
    if !warm { try? FileManager.default.removeItem(atPath: cacheFolder) }
    let downloader = benchDownloader(concurrency: concurrency)
    let cache = ImageCache(name: "prefetch", diskConfig: DiskStorage.Config(name: "prefetch", directory: URL(fileURLWithPath: cacheFolder)))
    let manager = ImageManager(downloader: downloader, cache: cache)
    let resize = ResizingImageProcessor(referenceSize: PixelSize(width: 256, height: 256), mode: .aspectFit)
    let prefetcher = ImagePrefetcher(urls: workload.urls, options: [.processor(resize)], manager: manager)
    prefetcher.maxConcurrentDownloads = concurrency
    let cpuStart = processCPUTime()
    let start = ContinuousClock.now
    let summary = await prefetcher.run()
    let sample = Sample(wall: ContinuousClock.now - start, clientCPU: processCPUTime() - cpuStart)
    try await downloader.shutdown()
    let expected = warm ? (skipped: workload.urls.count, completed: 0) : (skipped: 0, completed: workload.urls.count)
    guard summary.failed.isEmpty, summary.skipped.count == expected.skipped, summary.completed.count == expected.completed else {
        throw BenchError("prefetch: \(summary.completed.count) completed, \(summary.skipped.count) skipped, \(summary.failed.count) failed")
    }
    return sample
}
