// magpie-bench: decode and thumbnail benchmarks, Magpie side by side with the raw C
// codec loop, Pillow and djpeg in the same run. Every (tool, task, file) runs in its
// own child process so that peak RSS belongs to that task alone.
//
//   magpie-bench [--runs N] [--python PATH] FILE...
// Each measurement is one run of magpie-bench-worker (built next to this binary).
import Foundation
import Magpie

struct Measurement: Codable {
    var medianMs: Double
    var peakRSSKiB: Int
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func milliseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
}

/// Runs a command, returning its standard output, or nil when it fails.
func capture(_ executable: String, _ arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
}

func which(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

let pillowScript = """
import io, sys, time, statistics
from PIL import Image
task, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, 'rb').read()
def run():
    im = Image.open(io.BytesIO(data))
    if task == 'decode':
        im.load()
    else:
        im.draft('RGB', (256, 256))
        im.thumbnail((256, 256), Image.LANCZOS)
        if im.mode not in ('RGB', 'L'):
            im = im.convert('RGB')
        im.save(io.BytesIO(), 'JPEG', quality=80)
for _ in range(2): run()
times = []
for _ in range(runs):
    t = time.perf_counter(); run(); times.append((time.perf_counter() - t) * 1000)
# VmHWM, not ru_maxrss: after fork+exec ru_maxrss still holds the parent's high-water mark.
hwm = int([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])
print('{"medianMs": %f, "peakRSSKiB": %d}' % (statistics.median(times), hwm))
"""

func measureProcess(_ executable: String, _ arguments: [String]) -> Measurement? {
    guard let output = capture(executable, arguments) else { return nil }
    return try? JSONDecoder().decode(Measurement.self, from: Data(output.utf8))
}

/// Runs `executable` with stdout/stderr to /dev/null through posix_spawn (Foundation's
/// Process costs ~50 ms a spawn here) and returns the wall time.
func spawnTime(_ executable: String, _ arguments: [String]) -> Double? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let start = ContinuousClock.now
    guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { return nil }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return milliseconds(ContinuousClock.now - start)
}

/// djpeg run as a process per run, minus the median cost of spawning /bin/true.
func measureDjpeg(_ djpeg: String, path: String, scale: String?, runs: Int) -> Measurement? {
    var args = ["-outfile", "/dev/null"]
    if let scale { args += ["-scale", scale] }
    args.append(path)
    let spawnCost = median((0..<runs).compactMap { _ in spawnTime("/bin/true", []) })
    var times: [Double] = []
    for run in 0..<(runs + 2) {
        guard let t = spawnTime(djpeg, args) else { return nil }
        if run >= 2 { times.append(max(0, t - spawnCost)) }
    }
    return Measurement(medianMs: median(times), peakRSSKiB: 0)
}

// MARK: - Main

var arguments = Array(CommandLine.arguments.dropFirst())

var runs = 10
var python = which("python3") ?? "/usr/bin/python3"
var files: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--runs": runs = Int(arguments.removeFirst()) ?? runs
    case "--python": python = arguments.removeFirst()
    default: files.append(argument)
    }
}
let worker = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("magpie-bench-worker").path
let hasPillow = capture(python, ["-c", "import PIL"]) != nil
let djpeg = which("djpeg")

func fmt(_ m: Measurement?) -> String { m.map { String(format: "%.1f", $0.medianMs) } ?? "skipped" }
func rss(_ m: Measurement?) -> String { m.map { $0.peakRSSKiB > 0 ? String(format: "%.1f", Double($0.peakRSSKiB) / 1024) : "n/a" } ?? "skipped" }
func ratio(_ a: Measurement?, _ b: Measurement?) -> String {
    guard let a, let b, b.medianMs > 0 else { return "n/a" }
    return String(format: "%.2f×", a.medianMs / b.medianMs)
}

print("# magpie-bench: median of \(runs) runs after 2 warm-ups; each cell a fresh process")
print("Pillow: \(hasPillow ? "yes" : "not installed (skipped)"), djpeg: \(djpeg ?? "not installed (skipped)")\n")
print("| file | size | task | Magpie ms | raw C ms | Magpie/raw | Pillow ms | Magpie/Pillow | djpeg ms | Magpie/djpeg | Magpie RSS MiB | Pillow RSS MiB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for path in files {
    let name = URL(fileURLWithPath: path).lastPathComponent
    guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)), let image = try? ImageCoderRegistry.shared.decode(data, options: .init(onlyFirstFrame: true)) else {
        print("| \(name) | | | could not decode | | | | | | | | |")
        continue
    }
    let format = image.format
    for task in ["decode", "thumb"] {
        let magpie = measureProcess(worker, [task, path, "\(runs)"])
        let raw = task == "decode" && (format == .jpeg || format == .png)
            ? measureProcess(worker, ["raw-decode", path, "\(runs)"])
            : task == "thumb" && format == .jpeg ? measureProcess(worker, ["raw-thumb", path, "\(runs)"]) : nil
        let pillow = hasPillow ? measureProcess(python, ["-c", pillowScript, task, path, "\(runs)"]) : nil
        var djpegResult: Measurement?
        if let djpeg, format == .jpeg {
            // For thumbnails djpeg uses the DCT scale Magpie picks for 256 px.
            let scale = task == "decode" ? nil : "1/\(max(1, min(8, min(image.width, image.height) / 256)))"
            djpegResult = measureDjpeg(djpeg, path: path, scale: task == "decode" ? nil : scale, runs: runs)
        }
        print("| \(name) | \(image.width)x\(image.height) | \(task) | \(fmt(magpie)) | \(fmt(raw)) | \(ratio(magpie, raw)) | \(fmt(pillow)) | \(ratio(magpie, pillow)) | \(fmt(djpegResult)) | \(ratio(magpie, djpegResult)) | \(rss(magpie)) | \(rss(pillow)) |")
    }
}
