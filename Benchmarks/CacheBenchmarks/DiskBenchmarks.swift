import Dispatch
import Foundation
import Synchronization
import Magpie
import MagpieBenchSupport

/// DiskStorage figures: write throughput while filling N entries, the time to open a cache
/// that holds them, and the latency of a hit (index lookup + read + checksum, no decode)
/// next to a plain read of the same file.
func runDiskBenchmarks(entries: Int) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-disk-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let config = DiskStorage.Config(name: "bench", directory: folder)
    let payload = Data((0..<2_048).map { UInt8(truncatingIfNeeded: $0 &* 13) })
    let clock = ContinuousClock()

    var disk: DiskStorage? = try DiskStorage(config: config)
    let fill = try clock.measure {
        for i in 0..<entries { try disk!.store(payload, forKey: "https://example.com/\(i).jpg") }
    }
    let writesPerSecond = Double(entries) / seconds(fill)
    disk = nil

    var opens: [Double] = []
    for _ in 0..<5 {
        let elapsed = try clock.measure { disk = try DiskStorage(config: config) }
        opens.append(seconds(elapsed) * 1000)
    }
    let storage = disk!
    let count = try storage.count()

    let lookups = (0..<2_000).map { _ in "https://example.com/\(Int.random(in: 0..<entries)).jpg" }
    var hitTimes: [Double] = []
    var readTimes: [Double] = []
    for _ in 0..<5 {
        let hits = try clock.measure { for key in lookups { _ = try storage.value(forKey: key) } }
        hitTimes.append(seconds(hits) * 1e6 / Double(lookups.count))
        let reads = try clock.measure { for key in lookups { _ = try Data(contentsOf: storage.fileURL(forKey: key)) } }
        readTimes.append(seconds(reads) * 1e6 / Double(lookups.count))
    }
    let hit = median(hitTimes), read = median(readTimes)
    print()
    print("DiskStorage with \(count) entries of \(payload.count) bytes (SQLite index, WAL)")
    print("| measurement | value |")
    print("|---|---|")
    print("| fill (store) throughput | \(format(writesPerSecond, decimals: 0)) writes/s |")
    print("| open with \(count) entries | median \(format(median(opens), decimals: 1)) ms (of 5) |")
    print("| hit: index + read + CRC-32 + access update | \(format(hit, decimals: 1)) µs/op (\(format(1e6 / hit, decimals: 0)) ops/s) |")
    print("| raw Data(contentsOf:) of the same files | \(format(read, decimals: 1)) µs/op (\(format(1e6 / read, decimals: 0)) ops/s) |")
    print("| hit / raw read | \(format(hit / read, decimals: 2))× |")
    BenchLog.ratio("cache", "disk hit (DiskStorage) vs raw file read", hit / read, note: "floor: reading the same file")
    let openMs = median(opens)
    if count >= 100_000 {
        BenchLog.target("p2-open", "DiskStorage with \(count) entries", measured: format(openMs, decimals: 1) + " ms", limit: "< 1 s", met: openMs < 1000)
    }
}

private func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// A disk-hit `ImageCache.retrieveImage` (index, read, checksum, decode, with the memory
/// layer unable to hold anything) against decoding the same bytes already in memory.
func runImageCacheBenchmark(width: Int, height: Int, rounds: Int) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-cache-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var bytes = [UInt8](repeating: 255, count: width * height * 4)
    for i in stride(from: 0, to: bytes.count, by: 4) {
        let x = (i / 4) % width, y = (i / 4) / width
        bytes[i] = UInt8(truncatingIfNeeded: x &* 3 &+ y)
        bytes[i + 1] = UInt8(truncatingIfNeeded: y &* 5 ^ x)
        bytes[i + 2] = UInt8(truncatingIfNeeded: (x &* y) >> 4)
    }
    var image = try Image(width: width, height: height, rgba: bytes)
    image.format = .jpeg
    let data = try ImageCoderRegistry.shared.encode(image, as: .jpeg, options: .init(quality: 80))
    let cache = ImageCache(
        name: "bench", memoryConfig: .init(totalCostLimit: 1, cleanInterval: 0),
        diskConfig: .init(name: "bench", directory: folder))
    let done = DispatchSemaphore(value: 0)
    let result = Synchronization.Mutex<(Double, Double)>((0, 0))
    Task {
        try await cache.storeToDisk(data, forKey: "photo")
        let clock = ContinuousClock()
        var cached: [Double] = [], raw: [Double] = []
        for _ in 0..<rounds {
            cached.append(microseconds(try await clock.measure { _ = try await cache.retrieveImage(forKey: "photo") }))
            raw.append(microseconds(try clock.measure { _ = try ImageCoderRegistry.shared.decode(data) }))
        }
        result.withLock { $0 = (median(cached), median(raw)) }
        done.signal()
    }
    done.wait()
    let (cached, raw) = result.withLock { $0 }
    print()
    print("ImageCache disk hit vs raw decode (\(width)x\(height) JPEG q80, \(data.count) bytes, median of \(rounds))")
    print("| measurement | µs | ops/s |")
    print("|---|---|---|")
    print("| retrieveImage, disk hit (read + CRC + decode) | \(format(cached, decimals: 0)) | \(format(1e6 / cached, decimals: 0)) |")
    print("| decode of the same bytes in memory | \(format(raw, decimals: 0)) | \(format(1e6 / raw, decimals: 0)) |")
    print("| ratio | \(format(cached / raw, decimals: 2))× | |")
    BenchLog.ratio("cache", "ImageCache disk hit vs raw decode", cached / raw, note: "floor: decoding the same bytes from memory")
    BenchLog.target(
        "p2-disk-hit", "retrieveImage, \(width)×\(height) JPEG (\(format(cached, decimals: 0)) µs vs \(format(raw, decimals: 0)) µs)",
        measured: format(cached / raw, decimals: 2) + "×", limit: "≤ 1.10×", met: cached / raw <= 1.1)
}

private func microseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12
}
