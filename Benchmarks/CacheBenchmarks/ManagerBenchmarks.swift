// The cost of a memory hit through the whole pipeline: `ImageManager.retrieveImage` (options
// parsed, cache key, processor identifier, memory lookup, result) against the raw
// `MemoryStorage.value(forKey:)` it ends in, on the same 1,000 entries. The table here runs with
// 1 and 2 tasks; `--manager-only` is scripts/bench-library's pinned cell, whose verdicts count.
import Foundation
import Magpie
import MagpieBenchSupport

/// Runs `perTask` lookups in each of `tasks` concurrent tasks, `batches` times; returns the median wall ns per lookup.
func measureAsync(tasks: Int, perTask: Int, batches: Int, _ body: @escaping @Sendable (Int) async -> Int) async -> Double {
    await measureAsyncWithCPU(tasks: tasks, perTask: perTask, batches: batches, body).wallNs
}

/// As `measureAsync`, with the median CPU time of this process per lookup beside the wall time.
func measureAsyncWithCPU(
    tasks: Int, perTask: Int, batches: Int, _ body: @escaping @Sendable (Int) async -> Int
) async -> (wallNs: Double, cpuNs: Double) {
    var times: [Double] = [], cpu: [Double] = []
    for batch in -2..<batches {
        let clock = ContinuousClock()
        let began = clock.now, cpuBefore = processCPUNanoseconds()
        let total = await withTaskGroup(of: Int.self) { group in
            for task in 0..<tasks { group.addTask { await body(task) } }
            return await group.reduce(0, &+)
        }
        let elapsed = clock.now - began, cpuUsed = processCPUNanoseconds() - cpuBefore
        sink.add(total, ordering: .relaxed)
        if batch >= 0 {
            times.append(nanoseconds(elapsed))
            cpu.append(cpuUsed)
        }
    }
    return (median(times) / Double(perTask), median(cpu) / Double(perTask))
}

/// The manager over 1,000 entries in memory, the URLs it is asked for and the order they are asked in.
struct ManagerFixture: Sendable {
    let memory = MemoryStorage(config: .init(totalCostLimit: 1 << 30, cleanInterval: 0))
    let manager: ImageManager
    let urls = keys.map { URL(string: $0)! }
    let picks: [Int]

    init(perTask: Int) {
        manager = ImageManager(downloader: .default, cache: ImageCache(name: "bench-manager", memoryStorage: memory, diskStorage: nil))
        for i in 0..<entryCount { memory.store(images[i], forKey: keys[i]) }
        picks = (0..<perTask).map { _ in Int.random(in: 0..<entryCount) }
    }

    /// The raw lookup the manager's memory hit ends in.
    func rawLookups() -> Int {
        var total = 0
        for i in picks { total &+= memory.value(forKey: keys[i])?.width ?? 0 }
        return total
    }

    /// The same lookups through `ImageManager.retrieveImage` (async).
    func managerHits() async -> Int {
        var total = 0
        for i in picks { total &+= (try? await manager.retrieveImage(with: urls[i]))?.image.width ?? 0 }
        return total
    }
}

/// scripts/bench-library's manager row (`--manager-only`): one task, a batch of raw lookups and a batch of manager hits
/// by turns (so a neighbour's burst on the core hits both halves alike), printed as one JSON line of the median wall
/// and CPU ns per lookup. Run pinned to one core, a process per pair. `part` "hit" or "raw" runs that half alone (the
/// script's instruction counts, which need one part per process).
func runPinnedManagerCell(batches: Int, part: String?) async {
    let perTask = 100_000
    let fixture = ManagerFixture(perTask: perTask)
    var raw: [(wallNs: Double, cpuNs: Double)] = [], hit: [(wallNs: Double, cpuNs: Double)] = []
    for _ in 0..<batches {
        if part != "hit" { raw.append(await measureAsyncWithCPU(tasks: 1, perTask: perTask, batches: 1) { _ in fixture.rawLookups() }) }
        if part != "raw" { hit.append(await measureAsyncWithCPU(tasks: 1, perTask: perTask, batches: 1) { _ in await fixture.managerHits() }) }
    }
    var fields: [String] = []
    for (name, samples) in [("raw", raw), ("hit", hit)] where !samples.isEmpty {
        fields += ["\"\(name)Ns\": \(median(samples.map(\.wallNs)))", "\"\(name)CpuNs\": \(median(samples.map(\.cpuNs)))"]
    }
    print("{" + fields.joined(separator: ", ") + "}")
}

func runManagerBenchmark(batches: Int) async {
    let perTask = 100_000
    let fixture = ManagerFixture(perTask: perTask)
    let (manager, urls, picks) = (fixture.manager, fixture.urls, fixture.picks)
    print()
    print("Manager memory hit vs the raw memory lookup (\(perTask) hits per task, median of \(batches) batches)")
    print(pad("operation", 52) + leftPad("tasks", 6) + leftPad("ns/op", 10) + leftPad("hits/s", 12) + leftPad("vs raw", 9))
    for tasks in [1, 2] {
        let raw = await measureAsync(tasks: tasks, perTask: perTask, batches: batches) { _ in fixture.rawLookups() }
        let hit = await measureAsync(tasks: tasks, perTask: perTask, batches: batches) { _ in await fixture.managerHits() }
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
        // The chart bar only: the p4 targets' verdicts come from scripts/bench-library's pinned row (--manager-only).
        BenchLog.ratio("cache", "manager hit vs raw memory lookup, \(tasksText)", hit / raw, note: "floor: the lookup the manager ends in")
    }
}
