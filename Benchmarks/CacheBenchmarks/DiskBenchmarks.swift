import Foundation
import Magpie

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
    print("| hit: index + read + CRC-32 + access update | \(format(hit, decimals: 1)) µs/op |")
    print("| raw Data(contentsOf:) of the same files | \(format(read, decimals: 1)) µs/op |")
    print("| hit / raw read | \(format(hit / read, decimals: 2))× |")
}

private func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}
