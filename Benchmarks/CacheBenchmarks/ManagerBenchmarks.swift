// The cost of a memory hit through the whole pipeline: `ImageManager.retrieveImage` (options
// parsed, cache key, processor identifier, memory lookup, result) against the raw
// `MemoryStorage.value(forKey:)` it ends in, on the same 1,000 entries.
import Foundation
import Magpie
import MagpieBenchSupport

/// Runs `perTask` lookups in each of `tasks` concurrent tasks, `batches` times; returns the median wall ns per lookup.
func measureAsync(tasks: Int, perTask: Int, batches: Int, _ body: @escaping @Sendable (Int) async -> Int) async -> Double {
    var times: [Double] = []
    for batch in -2..<batches {
        let clock = ContinuousClock()
        let began = clock.now
        let total = await withTaskGroup(of: Int.self) { group in
            for task in 0..<tasks { group.addTask { await body(task) } }
            return await group.reduce(0, &+)
        }
        let elapsed = clock.now - began
        sink.add(total, ordering: .relaxed)
        if batch >= 0 { times.append(nanoseconds(elapsed)) }
    }
    return median(times) / Double(perTask)
}

func runManagerBenchmark(batches: Int) async {
    let memory = MemoryStorage(config: .init(totalCostLimit: 1 << 30, cleanInterval: 0))
    let cache = ImageCache(name: "bench-manager", memoryStorage: memory, diskStorage: nil)
    let manager = ImageManager(downloader: .default, cache: cache)
    let urls = keys.map { URL(string: $0)! }
    for i in 0..<entryCount { memory.store(images[i], forKey: keys[i]) }
    let perTask = 100_000
    let picks = (0..<perTask).map { _ in Int.random(in: 0..<entryCount) }
    print()
    print("Manager memory hit vs the raw memory lookup (\(perTask) hits per task, median of \(batches) batches)")
    print(pad("operation", 52) + leftPad("tasks", 6) + leftPad("ns/op", 10) + leftPad("hits/s", 12) + leftPad("vs raw", 9))
    for tasks in [1, 2] {
        let raw = await measureAsync(tasks: tasks, perTask: perTask, batches: batches) { _ in
            var total = 0
            for i in picks { total &+= memory.value(forKey: keys[i])?.width ?? 0 }
            return total
        }
        let hit = await measureAsync(tasks: tasks, perTask: perTask, batches: batches) { _ in
            var total = 0
            for i in picks { total &+= (try? await manager.retrieveImage(with: urls[i]))?.image.width ?? 0 }
            return total
        }
        let hitCompletion = await measureAsync(tasks: tasks, perTask: perTask / 10, batches: batches) { _ in
            var total = 0
            for i in picks.prefix(perTask / 10) {
                total &+= await withCheckedContinuation { continuation in
                    manager.retrieveImage(with: urls[i]) { continuation.resume(returning: (try? $0.get())?.image.width ?? 0) }
                }
            }
            return total
        }
        for (name, ns) in [
            ("raw: MemoryStorage.value(forKey:)", raw), ("ImageManager.retrieveImage (async, memory hit)", hit),
            ("ImageManager.retrieveImage (completion handler)", hitCompletion),
        ] {
            print(
                pad(name, 52) + leftPad("\(tasks)", 6) + leftPad(format(ns, decimals: 1), 10)
                    + leftPad(format(Double(tasks) * 1e9 / ns / 1e6, decimals: 2) + " M", 12)
                    + leftPad(format(ns / raw, decimals: 2) + "x", 9))
        }
        let tasksText = tasks == 1 ? "1 task" : "\(tasks) tasks"
        let hitsPerSecond = Double(tasks) * 1e9 / hit
        BenchLog.ratio("cache", "manager hit vs raw memory lookup, \(tasksText)", hit / raw, note: "floor: the lookup the manager ends in")
        BenchLog.target(
            "p4-manager-hit", "async retrieveImage, \(tasksText) (\(format(hit, decimals: 1)) ns vs \(format(raw, decimals: 1)) ns)",
            measured: format(hit / raw, decimals: 2) + "×", limit: "≤ 3.00×", met: hit / raw <= 3)
        BenchLog.target(
            "p4-manager-rate", "async retrieveImage, \(tasksText)", measured: format(hitsPerSecond / 1e6, decimals: 2) + " M hits/s",
            limit: "≥ 1 M hits/s", met: hitsPerSecond >= 1e6)
    }
}
