// magpie-http-bench: the HTTP caching rows (wave 2, part 4), printed as a Markdown section.
//   1. A 40 MiB body downloaded (bytes only) and a ~40 MB PNG retrieved (download, decode, disk store) by a fresh
//      child process, once with every body in memory (bodyFileThreshold nil: the wave-1 behaviour) and once spooled
//      (the default 4 MiB threshold): peak RSS (VmHWM) and peak anonymous RSS (RssAnon, sampled every 2 ms; mapped
//      file pages are not anonymous: the kernel can drop them, it cannot drop heap).
//   2. A body cut at half its length, then resumed: the origin's body bytes for the second attempt vs the whole.
//   3. stale-while-revalidate against an origin that answers after 500 ms: the retrieval's latency with the
//      directive vs a blocking revalidation of the same entry.
// The origin is MagpieOrigin in this process; the children load from it over loopback.
// With MAGPIE_BENCH_RATIOS set, appends part 4's target verdicts and the memory bars (Benchmarks/report.py).
//   magpie-http-bench [--runs N]
import Foundation
import Magpie
import MagpieBenchSupport
import MagpieOrigin

func log(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
func ms(_ d: Duration) -> Double { Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15 }
func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
func mib(_ kib: Int) -> String { format(Double(kib) / 1024, 1) }

/// A `/proc/self/status` field in KiB (0 when absent).
func statusKiB(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}

/// Samples RssAnon every 2 ms on its own thread and keeps the highest.
final class AnonymousPeak: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var running = true

    init() {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                let now = statusKiB("RssAnon")
                lock.withLock { peak = max(peak, now) }
                usleep(2000)
            }
        }
    }

    func stop() -> Int {
        let now = statusKiB("RssAnon")
        return lock.withLock {
            running = false
            return max(peak, now)
        }
    }
}

/// `magpie-http-bench body-child URL FOLDER THRESHOLD MODE`: one load of URL (MODE `bytes`: downloadData; `image`:
/// a retrieval into a disk cache in FOLDER), THRESHOLD bytes (or `none`) for spooling. Prints
/// `PEAK_KIB PEAK_ANON_KIB MS`. With no URL (`-`) it only prints its idle figures.
func bodyChild(_ arguments: [String]) async -> Never {
    guard arguments.count == 4 else {
        log("usage: magpie-http-bench body-child URL FOLDER THRESHOLD MODE")
        exit(2)
    }
    let sampler = AnonymousPeak()
    var configuration = ImageDownloader.Configuration()
    configuration.bodyFileThreshold = arguments[2] == "none" ? nil : Int(arguments[2])
    configuration.maximumResponseSize = 200 * 1024 * 1024
    configuration.downloadTimeout = .seconds(120)
    let folder = URL(fileURLWithPath: arguments[1])
    configuration.spoolDirectory = folder.appendingPathComponent("spool")
    let downloader = ImageDownloader(name: "http-bench", configuration: configuration)
    let started = ContinuousClock.now
    do {
        if let url = URL(string: arguments[0]), arguments[0] != "-" {
            if arguments[3] == "bytes" {
                _ = try await downloader.downloadData(with: url)
            } else {
                let cache = ImageCache(
                    name: "body", memoryConfig: MemoryStorage.Config(totalCostLimit: 1),
                    diskConfig: DiskStorage.Config(name: "body", directory: folder))
                let manager = ImageManager(downloader: downloader, cache: cache)
                _ = try await manager.retrieveImage(with: url, options: [.waitForCache])
                await manager.shutdown()
            }
        }
    } catch {
        log("body-child: \(error)")
        exit(1)
    }
    let elapsed = ContinuousClock.now - started
    let anon = sampler.stop()
    print("\(statusKiB("VmHWM")) \(anon) \(format(ms(elapsed), 0))")
    exit(0)
}

/// A `side`×`side` PNG that does not compress (RGB noise, opaque): about 3 × side² bytes.
func noisePNG(side: Int) throws -> Data {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var rgba = [UInt8](repeating: 255, count: side * side * 4)
    for i in rgba.indices where i % 4 != 3 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        rgba[i] = UInt8(truncatingIfNeeded: state >> 56)
    }
    return try ImageCoderRegistry.shared.encode(try Image(width: side, height: side, rgba: rgba), as: .png)
}

struct BodyRow {
    var label: String
    var memory: (peak: Int, anon: Int, ms: Double)
    var spooled: (peak: Int, anon: Int, ms: Double)
}

func runChild(_ url: String, threshold: String, mode: String, runs: Int) throws -> (peak: Int, anon: Int, ms: Double) {
    var peaks: [Double] = [], anons: [Double] = [], times: [Double] = []
    for _ in 0..<runs {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-http-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        guard let run = runToCompletion(CommandLine.arguments[0], ["body-child", url, folder.path, threshold, mode]), run.status == 0
        else { throw BenchError("body-child failed for \(url) (\(threshold), \(mode))") }
        let fields = run.output.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard fields.count == 3 else { throw BenchError("body-child printed \(run.output)") }
        peaks.append(fields[0]); anons.append(fields[1]); times.append(fields[2])
    }
    return (Int(median(peaks)), Int(median(anons)), median(times))
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ text: String) { description = text }
}

func main() async throws {
    var arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "body-child" { await bodyChild(Array(arguments.dropFirst())) }
    var runs = 3
    if let index = arguments.firstIndex(of: "--runs"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
        runs = max(1, value)
        arguments.removeSubrange(index...(index + 1))
    }
    log("http-bench: making a ~40 MB noise PNG")
    let side = Int((40_000_000 / 3.0).squareRoot())
    let png = try noisePNG(side: side)
    var cut = OriginAsset(bytes: [UInt8](png), contentType: "image/png")
    cut.cutAfter = png.count / 2
    let origin = try await ImageOrigin.start(assets: [
        "big.png": OriginAsset(bytes: [UInt8](png), contentType: "image/png"),
        "cut.png": cut,
    ])
    defer { Task { await origin.stop() } }

    // 1. Peak memory.
    let idle = try runChild("-", threshold: "none", mode: "bytes", runs: 1)
    var rows: [BodyRow] = []
    for (label, url, mode) in [
        ("40 MiB body, bytes only (`downloadData`)", origin.url("/huge?bytes=41943040&length=1"), "bytes"),
        ("\(format(Double(png.count) / 1_048_576, 1)) MiB PNG retrieved: download, decode, disk store", origin.url("/img/big.png"), "image"),
    ] {
        log("http-bench: \(label)")
        let memory = try runChild(url, threshold: "none", mode: mode, runs: runs)
        let spooled = try runChild(url, threshold: String(4 * 1024 * 1024), mode: mode, runs: runs)
        rows.append(BodyRow(label: label, memory: memory, spooled: spooled))
    }

    // 2. Resume.
    log("http-bench: resume")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-http-bench-resume-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var configuration = ImageDownloader.Configuration()
    configuration.spoolDirectory = folder
    configuration.maximumResponseSize = 200 * 1024 * 1024
    let downloader = ImageDownloader(name: "resume", configuration: configuration)
    let cutURL = URL(string: origin.url("/img/cut.png"))!
    let sentBefore = origin.bodyBytesSent
    _ = try? await downloader.downloadData(with: cutURL)
    let firstSent = origin.bodyBytesSent - sentBefore
    cut.cutAfter = nil
    origin.setAsset(cut, forName: "cut.png")
    let secondBefore = origin.bodyBytesSent
    let resumed = try await downloader.downloadData(with: cutURL)
    let secondSent = origin.bodyBytesSent - secondBefore
    guard resumed.data == png else { throw BenchError("the resumed body differs from the original") }
    guard downloader.statistics.resumedBodies == 1 else { throw BenchError("the second attempt did not resume") }
    try await downloader.shutdown()

    // 3. stale-while-revalidate vs a blocking revalidation, the origin answering after 500 ms.
    log("http-bench: stale-while-revalidate")
    var swrTimes: [Double] = [], blockingTimes: [Double] = []
    for run in 0..<max(runs, 5) {
        for swr in [true, false] {
            var asset = OriginAsset(bytes: [UInt8](smallPNG()), contentType: "image/png")
            asset.headers = ["Cache-Control": swr ? "max-age=0, stale-while-revalidate=600" : "max-age=0"]
            let name = "swr-\(run)-\(swr).png"
            origin.setAsset(asset, forName: name)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-http-bench-swr-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            let cache = ImageCache(name: "swr", diskConfig: DiskStorage.Config(name: "swr", directory: dir))
            let client = ImageDownloader(name: "swr")
            let manager = ImageManager(downloader: client, cache: cache)
            let url = URL(string: origin.url("/img/\(name)"))!
            _ = try await manager.retrieveImage(with: url, options: [.waitForCache, .respectCacheControl])
            cache.clearMemoryCache()
            origin.hold(name)
            let release = Task {
                try await Task.sleep(for: .milliseconds(500))
                origin.release(name)
            }
            let started = ContinuousClock.now
            let result = try await manager.retrieveImage(with: url, options: [.waitForCache, .respectCacheControl])
            let elapsed = ms(ContinuousClock.now - started)
            guard result.served == (swr ? .stale(.whileRevalidating) : .revalidated) else {
                throw BenchError("swr run served \(result.served)")
            }
            (swr ? { swrTimes.append(elapsed) } : { blockingTimes.append(elapsed) })()
            _ = try await release.value
            await manager.shutdown()
            try await client.shutdown()
        }
    }

    print("## HTTP caching (wave 2, part 4)")
    print()
    print("`magpie-http-bench` (`scripts/bench --http-only`), release build, MagpieOrigin over loopback; medians of \(runs) runs. "
        + "Peak RSS is the child process's VmHWM; peak anonymous RSS is RssAnon sampled every 2 ms (heap, not file pages "
        + "the kernel can drop). An idle child: \(mib(idle.peak)) MiB peak, \(mib(idle.anon)) MiB anonymous.")
    print()
    print("| load | bodies in memory (wave 1): peak / anonymous | spooled past 4 MiB: peak / anonymous | anonymous peak, spooled ÷ memory |")
    print("|---|---|---|---|")
    for row in rows {
        let ratio = Double(row.spooled.anon) / Double(max(1, row.memory.anon))
        print("| \(row.label) | \(mib(row.memory.peak)) / \(mib(row.memory.anon)) MiB, \(format(row.memory.ms, 0)) ms "
            + "| \(mib(row.spooled.peak)) / \(mib(row.spooled.anon)) MiB, \(format(row.spooled.ms, 0)) ms | \(format(ratio, 2))× |")
    }
    print()
    print("| resumable download | bytes | share of the body |")
    print("|---|---|---|")
    print("| body (\(png.count) bytes), first attempt cut by the origin after \(png.count / 2) | \(firstSent) sent | \(format(Double(firstSent) / Double(png.count) * 100, 1)) % |")
    let kept = png.count - secondSent
    print("| kept from the first attempt (what the client had read when the connection closed) | \(kept) kept | \(format(Double(kept) / Double(png.count) * 100, 1)) % |")
    print("| second attempt: `Range: bytes=\(kept)-` + `If-Range`, 206 | \(secondSent) sent | \(format(Double(secondSent) / Double(png.count) * 100, 1)) % (the rest only; the body is byte-identical) |")
    print()
    print("| stale entry, origin answers after 500 ms | median latency | ratio |")
    print("|---|---|---|")
    print("| `max-age=0` (blocking revalidation, 304) | \(format(median(blockingTimes), 1)) ms | 1.00× |")
    print("| `max-age=0, stale-while-revalidate=600` (served stale, revalidated in the background) | \(format(median(swrTimes), 1)) ms | \(format(median(swrTimes) / median(blockingTimes), 3))× |")
    print()

    // Part 4's targets. A spooled body adds no more heap than the spool threshold (4 MiB) over the idle process and,
    // when decoded, the image's own pixels; the resumed attempt sends only what the first one did not keep; a stale
    // entry under stale-while-revalidate answers before the origin's 500 ms.
    let threshold = 4096, pixelsKiB = side * side * 4 / 1024
    for (row, (short, imageKiB)) in zip(rows, [("40 MiB body", 0), ("40 MB PNG retrieved", pixelsKiB)]) {
        let added = row.spooled.anon - idle.anon - imageKiB
        let image = imageKiB > 0 ? " − the decoded \(side)×\(side) image \(mib(imageKiB)) MiB" : ""
        BenchLog.target(
            "w2p4-large-body", "\(row.label), spooled (bodies in memory: anonymous peak \(mib(row.memory.anon)) MiB)",
            measured: "+\(mib(added)) MiB (anonymous peak \(mib(row.spooled.anon)) − idle \(mib(idle.anon))\(image))",
            limit: "≤ +4.0 MiB", met: added <= threshold)
        BenchLog.ratio(
            "memory", "\(short): anonymous peak, spooled vs in memory",
            Double(row.spooled.anon) / Double(max(1, row.memory.anon)), note: "reference: Magpie with every body in memory (wave 1)")
    }
    BenchLog.target(
        "w2p4-resume", "\(png.count)-byte PNG cut at half, second attempt with Range + If-Range (206, body byte-identical)",
        measured: "\(format(Double(secondSent) / Double(png.count) * 100, 1)) % of the body sent again, \(format(Double(kept) / Double(png.count) * 100, 1)) % kept",
        limit: "< 100 % (the missing bytes only)", met: kept > 0 && secondSent < png.count)
    BenchLog.target(
        "w2p4-swr", "stale entry, `max-age=0, stale-while-revalidate=600`, origin answering after 500 ms",
        measured: "\(format(median(swrTimes), 1)) ms (blocking revalidation \(format(median(blockingTimes), 1)) ms)",
        limit: "< 500 ms", met: median(swrTimes) < 500)
}

/// A 64×48 PNG.
func smallPNG() -> Data {
    var rgba = [UInt8](repeating: 200, count: 64 * 48 * 4)
    for i in stride(from: 0, to: rgba.count, by: 4) { rgba[i] = UInt8(i % 251) }
    return (try? ImageCoderRegistry.shared.encode(try Image(width: 64, height: 48, rgba: rgba), as: .png)) ?? Data()
}

do {
    try await main()
    exit(0)
} catch {
    log("http-bench: \(error)")
    exit(1)
}
