// magpie-cache-bench: the cost of a memory-cache hit, MemoryStorage side by side with a
// plain Dictionary behind a Mutex (the floor any thread-safe cache has to pay) and NSCache.
//
//   magpie-cache-bench [--ops N] [--batches N] [--disk-entries N]   (--disk-entries 0 skips the disk part)
//   magpie-cache-bench --manager-only [--batches N] [--manager-part hit|raw]   (one JSON line: the manager hit against the raw lookup, one task;
//                                                      scripts/bench-library runs it pinned to one core)
//   magpie-cache-bench --disk-hit-only [--batches N] [--disk-part hit|raw]   (one JSON line: an ImageCache disk hit
//                                                      against decoding the same bytes from memory; pinned likewise)
//
// Every cache holds the same 1,000 small images and every lookup hits. A batch is N lookups
// per thread over the keys in a shuffled order; the median batch is reported. With 2 threads,
// ns/op is the wall time of one thread's lookup (both run at once) and ops/s is the total.
// Its main stays synchronous (async work through runBlocking) so that callgrind can count its instructions.
import Dispatch
import Foundation
import Magpie
import MagpieBenchSupport
import Synchronization

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count, let n = Int(arguments[i + 1]) else {
        return value
    }
    return n
}
let opsPerBatch = option("--ops", default: 200_000)
let batches = option("--batches", default: 15)
let entryCount = 1_000
let diskEntries = option("--disk-entries", default: 100_000)

/// Keeps results observable so the optimizer cannot drop the lookups.
let sink = Atomic<Int>(0)

final class ImageBox {
    let image: Image
    init(_ image: Image) { self.image = image }
}

/// NSCache is thread-safe but not marked Sendable, and the NSString keys are immutable after
/// setup; sharing both across the benchmark threads is safe.
struct SharedNSCache: @unchecked Sendable {
    let cache: NSCache<NSString, ImageBox>
    let lookupKeys: [NSString]
}

let images = (0..<entryCount).map { i in
    Image(pixels: try! PixelBuffer(width: 4 + i % 8, height: 4))
}
let keys = (0..<entryCount).map { "https://example.com/images/\($0).png" }
var generator = SystemRandomNumberGenerator()
let order = (0..<opsPerBatch).map { _ in Int.random(in: 0..<entryCount, using: &generator) }
let lookupKeys = order.map { keys[$0] }

let storage = MemoryStorage(config: .init(totalCostLimit: 1 << 30, cleanInterval: 0))
let storageNoExtend = MemoryStorage(config: .init(totalCostLimit: 1 << 30, accessExtending: .none, cleanInterval: 0))
let dictionary = Synchronization.Mutex<[String: Image]>([:])
let nsCache = SharedNSCache(cache: NSCache(), lookupKeys: order.map { keys[$0] as NSString })
for i in 0..<entryCount {
    storage.store(images[i], forKey: keys[i])
    storageNoExtend.store(images[i], forKey: keys[i])
    dictionary.withLock { $0[keys[i]] = images[i] }
    nsCache.cache.setObject(ImageBox(images[i]), forKey: keys[i] as NSString, cost: images[i].cost)
}

func nanoseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
}

/// Runs `body` once per batch on `threads` OS threads started together; returns the median wall time.
func measure(threads: Int, _ body: @escaping @Sendable () -> Int) -> Double {
    var times: [Double] = []
    for batch in -2..<batches {  // two warm-up batches
        let ready = DispatchSemaphore(value: 0)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            let thread = Thread {
                ready.signal()
                start.wait()
                sink.add(body(), ordering: .relaxed)
                done.leave()
            }
            thread.start()
        }
        for _ in 0..<threads { ready.wait() }
        let clock = ContinuousClock()
        let began = clock.now
        for _ in 0..<threads { start.signal() }
        done.wait()
        let elapsed = clock.now - began
        if batch >= 0 { times.append(nanoseconds(elapsed)) }
    }
    return median(times)
}

struct Result {
    var name: String
    var threads: Int
    var nsPerOp: Double
    var opsPerSecond: Double
}

func run(_ name: String, threads: Int, _ body: @escaping @Sendable () -> Int) -> Result {
    let wall = measure(threads: threads, body)
    let nsPerOp = wall / Double(opsPerBatch)
    return Result(name: name, threads: threads, nsPerOp: nsPerOp, opsPerSecond: Double(threads * opsPerBatch) / wall * 1e9)
}

let memoryHit: @Sendable () -> Int = {
    var total = 0
    for key in lookupKeys { total &+= storage.value(forKey: key)?.width ?? 0 }
    return total
}
let memoryHitNoExtend: @Sendable () -> Int = {
    var total = 0
    for key in lookupKeys { total &+= storageNoExtend.value(forKey: key)?.width ?? 0 }
    return total
}
let dictionaryHit: @Sendable () -> Int = {
    var total = 0
    for key in lookupKeys { total &+= dictionary.withLock { $0[key] }?.width ?? 0 }
    return total
}
let nsCacheHit: @Sendable () -> Int = {
    var total = 0
    for key in nsCache.lookupKeys { total &+= nsCache.cache.object(forKey: key)?.image.width ?? 0 }
    return total
}
let memoryStore: @Sendable () -> Int = {
    for (i, key) in lookupKeys.enumerated() { storage.store(images[order[i]], forKey: key) }
    return 0
}
let dictionaryStore: @Sendable () -> Int = {
    for (i, key) in lookupKeys.enumerated() {
        let image = images[order[i]]
        dictionary.withLock { $0[key] = image }
    }
    return 0
}

func format(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    if decimals == 0, abs(rounded) < 1e15 { return "\(Int(rounded))" }
    var text = "\(rounded)"
    if let dot = text.firstIndex(of: ".") {
        let fraction = text.distance(from: dot, to: text.endIndex) - 1
        if fraction < decimals { text += String(repeating: "0", count: decimals - fraction) }
    }
    return text
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func leftPad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

if arguments.contains("--disk-hit-only") {
    let part = arguments.firstIndex(of: "--disk-part").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    do {
        try runBlocking { try await runPinnedDiskHitCell(batches: batches, part: part) }
    } catch {
        FileHandle.standardError.write(Data("magpie-cache-bench: disk hit cell failed: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
if arguments.contains("--manager-only") {
    let part = arguments.firstIndex(of: "--manager-part").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    runBlocking { await runPinnedManagerCell(batches: batches, part: part) }
    exit(0)
}
print("magpie-cache-bench: \(entryCount) entries, \(opsPerBatch) hits per thread per batch, median of \(batches) batches")
print("CPUs: \(ProcessInfo.processInfo.activeProcessorCount)")
print()
print(pad("operation", 44) + leftPad("threads", 8) + leftPad("ns/op", 10) + leftPad("ops/s", 14) + leftPad("vs baseline", 13))

for threads in [1, 2] {
    let baseline = run("hit: Dictionary + Mutex (baseline)", threads: threads, dictionaryHit)
    let rows = [
        run("hit: MemoryStorage (.cacheTime extending)", threads: threads, memoryHit),
        run("hit: MemoryStorage (.none extending)", threads: threads, memoryHitNoExtend),
        baseline,
        run("hit: NSCache", threads: threads, nsCacheHit),
    ]
    for row in rows {
        print(
            pad(row.name, 44) + leftPad("\(row.threads)", 8) + leftPad(format(row.nsPerOp, decimals: 1), 10)
                + leftPad(format(row.opsPerSecond / 1e6, decimals: 2) + " M", 14)
                + leftPad(format(row.nsPerOp / baseline.nsPerOp, decimals: 2) + "x", 13))
    }
    let hit = rows[0].nsPerOp / baseline.nsPerOp
    let threadsText = threads == 1 ? "1 thread" : "\(threads) threads"
    BenchLog.ratio("cache", "memory hit vs Dictionary + Mutex, \(threadsText)", hit, note: "floor: the least any thread-safe cache pays")
    BenchLog.ratio("cache", "memory hit vs NSCache, \(threadsText)", rows[0].nsPerOp / rows[3].nsPerOp)
    BenchLog.target(
        "p2-memory-hit", "MemoryStorage hit, \(threadsText) (\(format(rows[0].nsPerOp, decimals: 1)) ns vs \(format(baseline.nsPerOp, decimals: 1)) ns)",
        measured: format(hit, decimals: 2) + "×", limit: "≤ 3.00×", met: hit <= 3)
}
let storeBaseline = run("store (replace): Dictionary + Mutex", threads: 1, dictionaryStore)
let storeRow = run("store (replace): MemoryStorage", threads: 1, memoryStore)
for row in [storeRow, storeBaseline] {
    print(
        pad(row.name, 44) + leftPad("\(row.threads)", 8) + leftPad(format(row.nsPerOp, decimals: 1), 10)
            + leftPad(format(row.opsPerSecond / 1e6, decimals: 2) + " M", 14)
            + leftPad(format(row.nsPerOp / storeBaseline.nsPerOp, decimals: 2) + "x", 13))
}
print()
runBlocking { await runManagerBenchmark(batches: batches) }
print("checksum \(sink.load(ordering: .relaxed)), entries \(storage.count), statistics \(storage.statistics)")
if diskEntries > 0 {
    do {
        try runDiskBenchmarks(entries: diskEntries)
        try runBlocking { try await runImageCacheBenchmark(rounds: 200) }
    } catch {
        print("disk benchmark failed: \(error)")
    }
}
