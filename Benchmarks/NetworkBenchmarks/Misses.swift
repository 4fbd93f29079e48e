// The "1,000 concurrent distinct misses: peak RSS" row. A fresh child process (this binary, `misses-child` mode)
// starts COUNT retrievals at once through Magpie's public API alone: an `ImageManager` with its own `ImageDownloader`
// (default configuration) and its own `ImageCache` (default memory storage, disk storage in a new empty folder),
// each retrieval for a distinct URL (`/img/miss.jpg?miss=N`: ImageOrigin ignores the query, so every URL is a cache
// miss that downloads the same ~1.4 MP JPEG) with a resize processor to fit 256×256 and `waitForCache`, all awaited.
// The child prints its wall time (first call started → last result in) and its peak RSS (VmHWM, read right after).
// The origin runs in this parent process, so the child's peak is the client's alone. An idle child (no retrievals)
// is run too: the floor of the process itself (code pages, Foundation, the manager's setup).
import Foundation
import Magpie
import MagpieBenchSupport
import MagpieOrigin

#if canImport(Glibc)
import Glibc
#endif

/// What the child prints: one JSON line.
struct MissesChildResult: Codable {
    var retrievals: Int
    /// Results that came from the network (`cacheType == .none`): all of them, for misses.
    var downloaded: Int
    var wallMs: Double
    var peakRSSKiB: Int
    /// Pixel bytes of all the thumbnails: the default memory cache (a quarter of RAM) keeps every one of them.
    var thumbnailBytes: Int
    var thumbnailWidth: Int
    var thumbnailHeight: Int
}

/// VmHWM of this process in KiB (0 when /proc is not there).
func peakRSSKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}

/// `magpie-net-bench misses-child URL COUNT CACHE_DIR`: COUNT concurrent retrievals of `URL?miss=0` ... `URL?miss=COUNT-1`.
/// Prints a MissesChildResult and exits 0; on any failure, prints the error to stderr and exits 1.
func missesChild(_ arguments: [String]) async -> Never {
    guard arguments.count == 3, let count = Int(arguments[1]), count >= 0 else {
        FileHandle.standardError.write(Data("usage: magpie-net-bench misses-child URL COUNT CACHE_DIR\n".utf8))
        exit(2)
    }
    let prefix = arguments[0]
    do {
        // A 16 MB memory layer (what `magpie prefetch` uses): with the default (a quarter of RAM) every thumbnail
        // stays, and the row would mostly measure 1,000 retained results instead of the work in flight.
        let cache = ImageCache(
            name: "misses", memoryConfig: MemoryStorage.Config(totalCostLimit: 16_000_000),
            diskConfig: DiskStorage.Config(name: "misses", directory: URL(fileURLWithPath: arguments[2])))
        let downloader = ImageDownloader(name: "misses")
        let manager = ImageManager(downloader: downloader, cache: cache)
        let resize = ResizingImageProcessor(referenceSize: PixelSize(width: 256, height: 256), mode: .aspectFit)
        let options: [MagpieOption] = [.processor(resize), .waitForCache]
        let urls = try (0..<count).map { index in
            guard let url = URL(string: "\(prefix)?miss=\(index)") else { throw BenchError("bad URL \(prefix)?miss=\(index)") }
            return url
        }
        let start = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: (CacheType, Int, Int, Int).self) { group in
            for url in urls {
                group.addTask {
                    let result = try await manager.retrieveImage(with: url, options: options)
                    return (result.cacheType, result.image.width, result.image.height, result.image.cost)
                }
            }
            var all: [(CacheType, Int, Int, Int)] = []
            for try await result in group { all.append(result) }
            return all
        }
        let wall = ContinuousClock.now - start
        let peak = peakRSSKiB()
        try await downloader.shutdown()
        let summary = MissesChildResult(
            retrievals: results.count, downloaded: results.filter { $0.0 == .none }.count, wallMs: ms(wall), peakRSSKiB: peak,
            thumbnailBytes: results.reduce(0) { $0 + $1.3 }, thumbnailWidth: results.first?.1 ?? 0, thumbnailHeight: results.first?.2 ?? 0)
        print(String(decoding: try JSONEncoder().encode(summary), as: UTF8.self))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("misses-child: FAILED: \(error)\n".utf8))
        exit(1)
    }
}

/// The JPEG every miss downloads, made from a photo: fit into 1600×900, JPEG q85.
struct MissImage {
    let bytes: [UInt8]
    let width: Int
    let height: Int
    let source: String

    static func make(from path: String) throws -> MissImage {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BenchError("misses: \(path) not found (the photo the 1,000-miss row serves; pass --miss-source FILE, or leave `misses` out of --only)")
        }
        let box = PixelSize(width: 1600, height: 900)
        let photo = try ImageCoderRegistry.shared.decode(data, options: ImageDecodingOptions(targetSize: box)).resized(toFit: box)
        let jpeg = try ImageCoderRegistry.shared.encode(photo, as: .jpeg, options: ImageEncodingOptions(quality: 85))
        return MissImage(bytes: Array(jpeg), width: photo.width, height: photo.height, source: path)
    }
}

struct MissesReport {
    let image: MissImage
    let count: Int
    let idle: MissesChildResult
    let runs: [MissesChildResult]
    let childCPU: [Duration]
}

/// Serves the miss image from an ImageOrigin in this process and runs the idle child, then `runs` children of `count`
/// retrievals each, every one with a new empty cache folder; checks that every retrieval reached the origin.
func missesRun(count: Int, runs: Int, source: String, workDir: String) async throws -> MissesReport {
    let image = try MissImage.make(from: source)
    let origin = try await ImageOrigin.start(assets: ["miss.jpg": OriginAsset(bytes: image.bytes, contentType: "image/jpeg")])
    do {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        func child(_ count: Int, _ run: Int) async throws -> (MissesChildResult, Duration) {
            let cacheFolder = workDir + "/misses-cache-\(run)"
            let out = workDir + "/misses-child.json", errors = workDir + "/misses-child.stderr"
            try? FileManager.default.removeItem(atPath: cacheFolder)
            defer { try? FileManager.default.removeItem(atPath: cacheFolder) }
            origin.resetCounters()
            let (code, cpu) = await waitForExit(
                try spawn(executable, ["misses-child", origin.url("/img/miss.jpg"), "\(count)", cacheFolder], stdout: out, stderr: errors))
            let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            guard code == 0 else {
                throw BenchError("misses child (\(count) retrievals) exited with \(code): \(said.split(separator: "\n").suffix(3).joined(separator: " | "))")
            }
            let result = try JSONDecoder().decode(MissesChildResult.self, from: Data(contentsOf: URL(fileURLWithPath: out)))
            let requests = origin.requestCount(path: "/img/miss.jpg")
            guard result.retrievals == count, result.downloaded == count, requests == count else {
                throw BenchError("misses: \(result.retrievals) results, \(result.downloaded) downloaded, \(requests) requests at the origin; expected \(count) of each")
            }
            return (result, cpu)
        }
        let idle = try await child(0, 0).0
        var results: [MissesChildResult] = []
        var cpu: [Duration] = []
        for run in 1...max(1, runs) {
            let (result, time) = try await child(count, run)
            log("misses run \(run): peak \(result.peakRSSKiB / 1024) MiB, \(format(result.wallMs, 0)) ms")
            results.append(result)
            cpu.append(time)
        }
        await origin.stop()
        return MissesReport(image: image, count: count, idle: idle, runs: results, childCPU: cpu)
    } catch {
        await origin.stop()
        throw error
    }
}

/// The row's Markdown.
func printMisses(_ report: MissesReport) {
    let mb = { (kib: Int) in String(format: "%.1f MB (%.1f MiB)", Double(kib) * 1024 / 1e6, Double(kib) / 1024) }
    let peaks = report.runs.map(\.peakRSSKiB)
    let walls = report.runs.map(\.wallMs)
    let first = report.runs[0]
    print("\(thousands(report.count)) concurrent distinct misses: \(thousands(report.count)) `ImageManager.retrieveImage` calls started at once in a task group "
        + "in a fresh child process (`magpie-net-bench misses-child`), each for its own URL `/img/miss.jpg?miss=N` on MagpieOrigin's `ImageOrigin` "
        + "(in the parent process, so the child's peak is the client's alone), all cache misses: a new `ImageManager` with its own `ImageDownloader` "
        + "(default configuration: 16 downloads at once, 6 per host) and its own `ImageCache` (a 16 MB memory layer, so retained thumbnails do not dominate; disk storage in a new empty folder), "
        + "options `.processor(ResizingImageProcessor(256×256, .aspectFit))` and `.waitForCache`, every call awaited. "
        + "The image: `\(URL(fileURLWithPath: report.image.source).lastPathComponent)` fitted into 1600×900 → "
        + "\(report.image.width)×\(report.image.height) JPEG q85, \(format(Double(report.image.bytes.count) / 1000)) KB. "
        + "Peak RSS = the child's VmHWM right after the last result; wall = first call started to last result in. "
        + "\(report.runs.count) run(s), each a new process and cache folder; the origin counted \(thousands(report.count)) requests in each.")
    print()
    print("| row | peak RSS (median) | peak RSS max | wall ms (median) | child CPU ms (median) | idle child peak | thumbnails held in the memory cache |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("| \(thousands(report.count)) concurrent distinct misses: peak RSS | \(mb(Int(median(peaks.map(Double.init))))) | \(mb(peaks.max() ?? 0)) "
        + "| \(format(median(walls), 0)) | \(format(median(report.childCPU.map { ms($0) }), 0)) | \(mb(report.idle.peakRSSKiB)) "
        + "| \(thousands(first.retrievals)) × \(first.thumbnailWidth)×\(first.thumbnailHeight), \(format(Double(first.thumbnailBytes) / 1e6)) MB of pixels |")
    print()
}
