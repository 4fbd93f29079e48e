// magpie-net-bench: Magpie's ImageDownloader against curl over loopback, plus dedupe of one URL.
//
//   magpie-net-bench [--runs N] [--count N] [--origin auto|nginx|magpie] [--nginx PATH] [--curl PATH] [--images DIR]
//                    [--miss-source FILE] [--only data,image,decode,prefetch,prefetch-warm,curl,dedupe,misses] [--verbose]
//                    [--origin-core N] [--json]
//
// Throughput: `--count` (1,000) distinct ~50 KB JPEGs, 16 downloads at once, from nginx in its own process when
// installed (else, or with --origin magpie, MagpieOrigin's ImageOrigin inside this process). Rows run interleaved
// (warm-up round, then N rounds) so drift on the machine hits every row alike; the median is reported.
// Dedupe: 1,000 concurrent downloadImage calls for one slow URL on ImageOrigin, which counts the requests.
// Misses: `--count` concurrent retrievals of distinct URLs in a fresh child process, its peak RSS and wall time
// (Misses.swift; the image is made from --miss-source, default ../shared/corpus/large/SafeLanding_5120x2880.jpg).
// Peers: nginx (--nginx PATH, a path or a name on PATH; else found on PATH or in the sbin folders) and curl (likewise).
// One that is found but fails (nginx does not start, curl exits non-zero or returns wrong bytes) fails the bench
// (exit 1); one that is not installed is reported as skipped (nginx: the origin is ImageOrigin in this process).
// Prints Markdown to stdout (scripts/bench appends it to docs/BENCHMARKS.md); fails loudly on any wrong byte count.
// --origin-core N moves nginx to core N once started (the bench itself is pinned by whoever starts it: scripts/bench-library
// runs `taskset -c 0 magpie-net-bench --only data,curl --origin-core 1 --json`); --json prints the throughput rows'
// samples round by round as one JSON line instead of the Markdown, for that script's alternated pairs.
import Foundation
import Magpie
import MagpieBenchSupport
import MagpieOrigin

let arguments = CommandLine.arguments
// The child process of the misses row: runs its retrievals, prints one JSON line and exits.
if arguments.count > 1, arguments[1] == "misses-child" { await missesChild(Array(arguments.dropFirst(2))) }
func option(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}
let runs = max(1, option("--runs").flatMap(Int.init) ?? 5)
let count = max(1, option("--count").flatMap(Int.init) ?? 1_000)
let originChoice = option("--origin") ?? "auto"
let imageFolder = option("--images") ?? ".build-bench/net-images"
let concurrency = 16
let verbose = arguments.contains("--verbose")  // every sample to stderr
let missSource = option("--miss-source") ?? "../shared/corpus/large/SafeLanding_5120x2880.jpg"
let originCore = option("--origin-core").flatMap(Int.init)
let printsJSON = arguments.contains("--json")

/// A peer's executable: `given` (a path, or a bare name looked up like findExecutable) must exist, or the bench
/// stops; without it, `name` wherever findExecutable finds it, or nil (not installed).
func peerExecutable(_ name: String, given: String?) throws -> String? {
    guard let given else { return findExecutable(name) }
    let found = given.contains("/") ? (access(given, X_OK) == 0 ? given : nil) : findExecutable(given)
    guard let found else { throw BenchError("--\(name) \(given): no such executable") }
    return found
}

/// The parts of the run, in order; `--only data,curl` (say) runs a subset, e.g. under `perf`.
enum Part: String, CaseIterable {
    case data, image, decode, prefetch, prefetchWarm = "prefetch-warm", curl, dedupe, misses
}
let selected = option("--only").map { list in Part.allCases.filter { list.split(separator: ",").contains(Substring($0.rawValue)) } }
    ?? Part.allCases

func log(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
func ms(_ d: Duration) -> Double { Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15 }
func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
func thousands(_ n: Int) -> String { n >= 1000 ? "\(n / 1000),\(String(format: "%03d", n % 1000))" : "\(n)" }

/// The server the throughput rows download from; stopped on every exit path.
enum ThroughputOrigin {
    case nginx(NginxServer)
    case inProcess(ImageOrigin)

    func stop() async {
        switch self {
        case .nginx(let server): await server.stop()
        case .inProcess(let origin): await origin.stop()
        }
    }
}

@MainActor
func startOrigin(images: ImageSet, workDir: String) async throws -> (ThroughputOrigin, Workload, String) {
    if originChoice != "magpie" {
        // Found means it must run: a broken nginx fails the bench instead of quietly becoming ImageOrigin.
        if let nginx = try peerExecutable("nginx", given: option("--nginx")) {
            let server = try await NginxServer.start(executable: nginx, root: images.folder, workDir: workDir)
            if let originCore { try await server.pin(toCore: originCore) }
            let urls = images.names.compactMap { URL(string: server.url($0)) }
            return (.nginx(server), Workload(urls: urls, sizes: images.sizes),
                    "\(server.version) in its own process (one process, keep-alive, sendfile), `\(nginx)`")
        } else if originChoice == "nginx" {
            throw BenchError("--origin nginx: nginx is not installed")
        }
    }
    var assets: [String: OriginAsset] = [:]
    for name in images.names {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: images.folder + "/" + name))
        assets[name] = OriginAsset(bytes: bytes, contentType: "image/jpeg")
    }
    let origin = try await ImageOrigin.start(assets: assets)
    let urls = images.names.compactMap { URL(string: origin.url("/img/" + $0)) }
    return (.inProcess(origin), Workload(urls: urls, sizes: images.sizes),
            "MagpieOrigin `ImageOrigin` (Hummingbird) INSIDE the bench process (nginx \(originChoice == "magpie" ? "not asked for" : "not installed: skipped")): "
                + "it competes with the Magpie client for the cores, and Magpie's CPU column includes it")
}

let workDir = FileManager.default.temporaryDirectory.path + "/magpie-net-bench-\(getpid())"
let interruptSources = handleInterrupts(workDir: workDir)
do {
    try FileManager.default.createDirectory(atPath: workDir, withIntermediateDirectories: true)
    let images = try ImageSet.prepare(folder: imageFolder, count: count)
    let (origin, workload, originText) = try await startOrigin(images: images, workDir: workDir)
    do {
        try await report(images: images, origin: origin, workload: workload, originText: originText)
        await origin.stop()
    } catch {
        await origin.stop()
        throw error
    }
    try? FileManager.default.removeItem(atPath: workDir)
} catch {
    try? FileManager.default.removeItem(atPath: workDir)
    log("magpie-net-bench: FAILED: \(error)")
    exit(1)
}

@MainActor
func report(images: ImageSet, origin: ThroughputOrigin, workload: Workload, originText: String) async throws {
    var curl: CurlClient?
    if let executable = try peerExecutable("curl", given: option("--curl")) {
        curl = try await CurlClient(executable: executable, workload: workload, workDir: workDir, parallel: concurrency)
    } else {
        log("curl is not installed: its row is skipped")
    }
    let rows = selected.filter { $0 != .dedupe && $0 != .misses && ($0 != .curl || curl != nil) }
    let bodies = try rows.contains(.decode) ? images.names.map { try Data(contentsOf: URL(fileURLWithPath: images.folder + "/" + $0)) } : []
    var samples = [[Sample]](repeating: [], count: rows.count)
    var originCPU = [Duration](repeating: .zero, count: rows.count)
    for round in 0...runs {  // round 0 is the warm-up
        for (index, row) in rows.enumerated() {
            let originBefore = nginxCPU(origin)
            let sample: Sample
            switch row {
            case .data: sample = try await magpieRun(workload, decode: false, concurrency: concurrency)
            case .image: sample = try await magpieRun(workload, decode: true, concurrency: concurrency)
            case .decode: sample = try await decodeRun(bodies)
            case .prefetch: sample = try await prefetchRun(workload, cacheFolder: workDir + "/prefetch-cache", concurrency: concurrency, warm: false)
            case .prefetchWarm: sample = try await prefetchRun(workload, cacheFolder: workDir + "/prefetch-cache", concurrency: concurrency, warm: true)
            case .curl, .dedupe, .misses: sample = try await curl!.run(workload)
            }
            if verbose { log("round \(round) \(row): wall \(format(ms(sample.wall))) ms, CPU \(format(ms(sample.clientCPU))) ms") }
            guard round > 0 else { continue }
            samples[index].append(sample)
            if let before = originBefore, let after = nginxCPU(origin) { originCPU[index] += after - before }
        }
    }
    if printsJSON {
        printSamplesJSON(rows: rows, samples: samples, originCPU: originCPU)
        return
    }
    // Throughput rows (none with e.g. --only dedupe,misses).
    if !rows.isEmpty {
        let spawn = try await spawnCost()

        let totalMB = Double(images.totalBytes) / 1e6
        print("`magpie-net-bench --runs \(runs)\(count == 1000 ? "" : " --count \(count)")` (release build).")
        print("Images: \(thousands(count)) distinct JPEGs, \(ImageSet.width)×\(ImageSet.height), mean \(format(images.meanBytes / 1000)) KB "
            + "(min \(format(Double(images.sizes.min() ?? 0) / 1000)), max \(format(Double(images.sizes.max() ?? 0) / 1000))), "
            + "\(format(totalMB)) MB in all (1 MB = 10⁶ bytes), in `\(imageFolder)`.")
        print("Origin, on 127.0.0.1: \(originText).")
        print("Magpie: a fresh `ImageDownloader` per run (its own new connections, as each curl process has), "
            + "`maximumConcurrentDownloads = \(concurrency)`, `maximumConcurrentDownloadsPerHost = \(concurrency)`; "
            + "all \(thousands(count)) calls launched at once in a task group, the downloader queues them.")
        if curl == nil && selected.contains(.curl) {
            print("curl: not installed (skipped): no curl row, and no Magpie/curl ratios.")
        }
        if let curl {
            print("curl: `\(curl.executable) \(curl.arguments.map { $0.contains(" ") || $0.contains("%") ? "'\($0)'" : $0 }.joined(separator: " ")) > report.txt` "
                + "(the config holds \(thousands(count)) `url = ...` / `output = \"/dev/null\"` pairs; `-w` prints each transfer's status and size, "
                + "which are checked). Started with posix_spawn; its wall time includes the spawn (/bin/true spawned and reaped: \(format(ms(spawn), 2)) ms).")
        }
        print("Every download is checked for its byte count (and, when decoded, the image size). "
            + "Median of \(runs) runs after 1 warm-up round, the rows interleaved run by run.")
        print()
        print("| client | images/s | MB/s | time Magpie/curl | wall ms | min–max ms | client CPU ms | origin CPU ms |")
        print("|---|---|---|---|---|---|---|---|")
        let medians = samples.map { median($0.map { ms($0.wall) }) }
        let curlMedian = rows.firstIndex(of: .curl).map { medians[$0] }
        for (row, client) in rows.enumerated() {
            let wall = medians[row]
            let walls = samples[row].map { ms($0.wall) }
            let ratio = client == .curl || client == .decode || client == .prefetchWarm ? "—" : curlMedian.map { format(wall / $0, 2) + "×" } ?? "n/a"
            let originColumn: String
            if client == .decode || client == .prefetchWarm { originColumn = "—" } else if case .nginx = origin { originColumn = format(ms(originCPU[row]) / Double(runs), 0) } else { originColumn = "in client" }
            let label = switch client {
            case .data: "Magpie `downloadData`"
            case .image: "Magpie `downloadImage` (download + decode)"
            case .decode: "reference: Magpie decode alone, bytes in memory (no network)"
            case .prefetch: "Magpie `ImagePrefetcher`, empty cache: download + decode + resize 256 + store (disk)"
            case .prefetchWarm: "Magpie `ImagePrefetcher` again, new manager over the warm cache (all skipped)"
            case .curl, .dedupe, .misses: "\(curl?.version ?? "curl") `--parallel`"
            }
            print("| \(label) | \(format(Double(count) / wall * 1000, 0)) | \(format(totalMB / wall * 1000)) | \(ratio) | \(format(wall)) "
                + "| \(format(walls.min() ?? 0))–\(format(walls.max() ?? 0)) | \(format(median(samples[row].map { ms($0.clientCPU) }), 0)) | \(originColumn) |")
        }
        if let curlMedian { logRatios(rows: rows, medians: medians, curl: curlMedian) }
        print()
        print("time Magpie/curl = the row's median wall time / curl's (below 1.00× Magpie is faster); curl does not decode, so the `downloadImage` ratio "
            + "shows what decoding adds, and the reference row (the same 1,000 decodes launched the same way) is its floor. Client CPU = user + system time of the client "
            + "(Magpie: the bench process; curl: the curl process), median; origin CPU = nginx's, mean per run (10 ms resolution).")
        print()
    }

    if selected.contains(.dedupe) { try await printDedupe(images: images) }
    if selected.contains(.misses) {
        printMisses(try await missesRun(count: count, runs: runs, source: missSource, workDir: workDir))
    }
}

@MainActor
func printDedupe(images: ImageSet) async throws {
    let dedupe = try await dedupeRun(name: images.names[0], bytes: Array(try Data(contentsOf: URL(fileURLWithPath: images.folder + "/" + images.names[0]))),
                                     calls: 1_000, concurrency: concurrency)
    print("Dedupe: 1,000 concurrent `downloadImage` calls for one URL, `\(dedupe.route)` (\(format(Double(images.sizes[0]) / 1000)) KB "
        + "in 16 KiB chunks 20 ms apart) on MagpieOrigin's `ImageOrigin` in the bench process (it counts requests), one fresh downloader.")
    print()
    print("| requests at origin | results delivered | downloader requestsSent | downloader dedupeHits | time ms |")
    print("|---|---|---|---|---|")
    print("| \(dedupe.requestsAtOrigin) (expected 1) | \(thousands(dedupe.delivered)) | \(dedupe.statistics.requestsSent) "
        + "| \(dedupe.statistics.dedupeHits) | \(format(ms(dedupe.wall))) |")
    BenchLog.target(
        "p3-dedupe", "1,000 concurrent downloadImage calls for one URL", measured: "\(dedupe.requestsAtOrigin) request(s) at the origin",
        limit: "1 request", met: dedupe.requestsAtOrigin == 1)
}

/// The chart's network and prefetch bars (Magpie's wall time over curl's, lower is better).
@MainActor
func logRatios(rows: [Part], medians: [Double], curl: Double) {
    for (row, wall) in zip(rows, medians) {
        switch row {
        case .data:
            // The chart bar only: p3-network's verdict comes from scripts/bench-library's pinned row (--json).
            BenchLog.ratio("network", "downloadData vs curl --parallel", wall / curl)
        case .image: BenchLog.ratio("network", "downloadImage (+ decode) vs curl (download only)", wall / curl, note: "reference: curl does not decode")
        case .prefetch: BenchLog.ratio("prefetch", "prefetch, empty cache vs curl download only", wall / curl, note: "reference: curl only downloads")
        case .prefetchWarm: BenchLog.ratio("prefetch", "prefetch again, warm cache vs curl download only", wall / curl, note: "reference: curl only downloads")
        case .decode, .curl, .dedupe, .misses: break
        }
    }
}

/// `--json`: every throughput row's samples, round by round (wall and client CPU in ms), and the origin's CPU per row
/// over all rounds, as one JSON line.
func printSamplesJSON(rows: [Part], samples: [[Sample]], originCPU: [Duration]) {
    let fields = rows.enumerated().map { index, row in
        let walls = samples[index].map { format(ms($0.wall), 3) }.joined(separator: ", ")
        let cpu = samples[index].map { format(ms($0.clientCPU), 3) }.joined(separator: ", ")
        return "\"\(row.rawValue)\": {\"wallMs\": [\(walls)], \"cpuMs\": [\(cpu)], \"originCpuMs\": \(format(ms(originCPU[index]), 1))}"
    }
    print("{\"images\": \(count), \"concurrency\": \(concurrency), " + fields.joined(separator: ", ") + "}")
}

func nginxCPU(_ origin: ThroughputOrigin) -> Duration? {
    if case .nginx(let server) = origin { return server.cpuTime }
    return nil
}

