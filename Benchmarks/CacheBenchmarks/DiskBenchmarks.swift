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

/// A 640×480 JPEG (q80) stored in an `ImageCache`'s disk layer whose memory layer cannot hold anything, so every
/// `retrieveImage(forKey:)` is a disk hit: index lookup, read, checksum, decode.
struct DiskHitFixture: Sendable {
    let folder: URL
    let data: Data
    let cache: ImageCache
    let width: Int, height: Int

    init(width: Int = 640, height: Int = 480) async throws {
        self.width = width
        self.height = height
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-cache-bench-\(UUID().uuidString)")
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for i in stride(from: 0, to: bytes.count, by: 4) {
            let x = (i / 4) % width, y = (i / 4) / width
            bytes[i] = UInt8(truncatingIfNeeded: x &* 3 &+ y)
            bytes[i + 1] = UInt8(truncatingIfNeeded: y &* 5 ^ x)
            bytes[i + 2] = UInt8(truncatingIfNeeded: (x &* y) >> 4)
        }
        var image = try Image(width: width, height: height, rgba: bytes)
        image.format = .jpeg
        data = try ImageCoderRegistry.shared.encode(image, as: .jpeg, options: .init(quality: 80))
        cache = ImageCache(
            name: "bench", memoryConfig: .init(totalCostLimit: 1, cleanInterval: 0),
            diskConfig: .init(name: "bench", directory: folder))
        try await cache.storeToDisk(data, forKey: "photo")
    }

    /// `count` disk hits; the sum of the images' widths.
    func diskHits(_ count: Int) async throws -> Int {
        var total = 0
        for _ in 0..<count { total &+= try await cache.retrieveImage(forKey: "photo").image?.width ?? 0 }
        return total
    }

    /// `count` decodes of the same bytes from memory (the floor).
    func rawDecodes(_ count: Int) throws -> Int {
        var total = 0
        for _ in 0..<count { total &+= try ImageCoderRegistry.shared.decode(data).width }
        return total
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// scripts/bench-library's disk-hit row (`--disk-hit-only`): batches of 20 decodes from memory and 20 disk hits by
/// turns (so a neighbour's burst on the core hits both halves alike), after 2 warm-up turns, printed as one JSON line
/// of the median wall and CPU µs per item. The CPU is the whole process's, since the read runs on an I/O thread. Run
/// pinned to one core, a process per pair; `part` "hit" or "raw" runs that half alone (for instruction counts).
func runPinnedDiskHitCell(batches: Int, part: String?) async throws {
    let perBatch = 20
    let fixture = try await DiskHitFixture()
    defer { fixture.remove() }
    var raw: [(wall: Double, cpu: Double)] = [], hit: [(wall: Double, cpu: Double)] = []
    let clock = ContinuousClock()
    /// One batch's wall and CPU µs.
    func timed(_ batch: () async throws -> Int) async throws -> (wall: Double, cpu: Double) {
        let began = clock.now, cpu = processCPUNanoseconds()
        sink.add(try await batch(), ordering: .relaxed)
        return (microseconds(clock.now - began), (processCPUNanoseconds() - cpu) / 1e3)
    }
    for turn in -2..<batches {
        let raws = part == "hit" ? nil : try await timed { try fixture.rawDecodes(perBatch) }
        let hits = part == "raw" ? nil : try await timed { try await fixture.diskHits(perBatch) }
        guard turn >= 0 else { continue }  // a warm-up turn
        raws.map { raw.append($0) }
        hits.map { hit.append($0) }
    }
    var fields: [String] = []
    for (name, samples) in [("raw", raw), ("hit", hit)] where !samples.isEmpty {
        fields += [
            "\"\(name)Us\": \(median(samples.map(\.wall)) / Double(perBatch))",
            "\"\(name)CpuUs\": \(median(samples.map(\.cpu)) / Double(perBatch))",
        ]
    }
    fields.append("\"bytes\": \(fixture.data.count)")
    print("{" + fields.joined(separator: ", ") + "}")
}

/// A disk-hit `ImageCache.retrieveImage` (index, read, checksum, decode, with the memory
/// layer unable to hold anything) against decoding the same bytes already in memory, unpinned and on wall time: the
/// chart's bar. The target's verdict comes from scripts/bench-library's pinned row (`--disk-hit-only`).
func runImageCacheBenchmark(rounds: Int) async throws {
    let fixture = try await DiskHitFixture()
    defer { fixture.remove() }
    let clock = ContinuousClock()
    var cached: [Double] = [], raw: [Double] = []
    for _ in 0..<rounds {
        cached.append(microseconds(try await clock.measure { _ = try await fixture.diskHits(1) }))
        raw.append(microseconds(try clock.measure { _ = try fixture.rawDecodes(1) }))
    }
    let (hit, floor) = (median(cached), median(raw))
    print()
    print("ImageCache disk hit vs raw decode (\(fixture.width)x\(fixture.height) JPEG q80, \(fixture.data.count) bytes, median of \(rounds))")
    print("| measurement | µs | ops/s |")
    print("|---|---|---|")
    print("| retrieveImage, disk hit (read + CRC + decode) | \(format(hit, decimals: 0)) | \(format(1e6 / hit, decimals: 0)) |")
    print("| decode of the same bytes in memory | \(format(floor, decimals: 0)) | \(format(1e6 / floor, decimals: 0)) |")
    print("| ratio | \(format(hit / floor, decimals: 2))× | |")
    BenchLog.ratio("cache", "ImageCache disk hit vs raw decode", hit / floor, note: "floor: decoding the same bytes from memory")
}

private func microseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12
}
