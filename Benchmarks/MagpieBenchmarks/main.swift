// magpie-bench: decode and thumbnail benchmarks, Magpie side by side with the raw C
// codec loop, Pillow and djpeg in the same run. Every (tool, task, file) runs in its
// own child process so that peak RSS belongs to that task alone.
//
//   magpie-bench [--runs N] [--python PATH] FILE...
//   magpie-bench --child TASK FILE RUNS        (internal)
import CImageCodecs
import Foundation
import Magpie

struct Measurement: Codable {
    var medianMs: Double
    var peakRSSKiB: Int
}

let thumbBox = PixelSize(width: 256, height: 256)

/// Work done once per timed run by each task.
func runTask(_ task: String, _ data: Data) throws {
    switch task {
    case "decode":
        _ = try ImageCoderRegistry.shared.decode(data)
    case "thumb":
        let image = try ImageCoderRegistry.shared.decode(data, options: .init(targetSize: thumbBox))
        let small = try image.resized(toFit: thumbBox)
        _ = try ImageCoderRegistry.shared.encode(small, as: .jpeg, options: .init(quality: 80))
    case "raw-decode":
        // The C wrapper alone: no orientation, no Swift image model.
        var bitmap = mg_bitmap()
        var error = mg_error()
        var limits = mg_limits(max_pixels: 0, max_total_bytes: 0, max_frames: 0)
        let status = data.withUnsafeBytes { raw -> Int32 in
            let p = raw.bindMemory(to: UInt8.self).baseAddress!
            switch ImageFormat(sniffing: data) {
            case .jpeg: return mg_jpeg_decode(p, raw.count, 0, 0, 0, &limits, &bitmap, &error)
            case .png: return mg_png_decode(p, raw.count, &limits, &bitmap, &error)
            default: return -1
            }
        }
        guard status == 0 else { throw MagpieError.decodingFailed(reason: .corruptData(.unknown, message: "raw decode failed")) }
        mg_free(bitmap.pixels)
    default:
        fatalError("unknown task \(task)")
    }
}

func peakRSSKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func milliseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
}

func child(task: String, path: String, runs: Int) throws -> Measurement {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    for _ in 0..<2 { try runTask(task, data) }  // warm-up
    var times: [Double] = []
    let clock = ContinuousClock()
    for _ in 0..<runs { times.append(milliseconds(clock.measure { try? runTask(task, data) })) }
    return Measurement(medianMs: median(times), peakRSSKiB: peakRSSKiB())
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
import io, sys, time, resource, statistics
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
print('{"medianMs": %f, "peakRSSKiB": %d}' % (statistics.median(times), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""

func measureProcess(_ executable: String, _ arguments: [String]) -> Measurement? {
    guard let output = capture(executable, arguments) else { return nil }
    return try? JSONDecoder().decode(Measurement.self, from: Data(output.utf8))
}

/// djpeg as a whole process per run (its start-up, about 1 ms, is included).
func measureDjpeg(_ djpeg: String, path: String, scale: String?, runs: Int) -> Measurement? {
    var args = ["-outfile", "/dev/null"]
    if let scale { args += ["-scale", scale] }
    args.append(path)
    var times: [Double] = []
    let clock = ContinuousClock()
    for run in 0..<(runs + 2) {
        let elapsed = clock.measure { _ = capture(djpeg, args) }
        if run >= 2 { times.append(milliseconds(elapsed)) }
    }
    return Measurement(medianMs: median(times), peakRSSKiB: 0)
}

// MARK: - Main

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--child", arguments.count == 4 {
    do {
        let m = try child(task: arguments[1], path: arguments[2], runs: Int(arguments[3]) ?? 10)
        print(String(decoding: try JSONEncoder().encode(m), as: UTF8.self))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}

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
let me = CommandLine.arguments[0]
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
        let magpie = measureProcess(me, ["--child", task, path, "\(runs)"])
        let raw = task == "decode" && (format == .jpeg || format == .png)
            ? measureProcess(me, ["--child", "raw-decode", path, "\(runs)"]) : nil
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
