// magpie-bench-worker: runs one benchmark task on one file and prints its median time
// and peak RSS as JSON. Kept apart from magpie-bench, and linking only MagpieCore (no NIO,
// AsyncHTTPClient or full Foundation), so its peak RSS is what a lean thumbnail worker costs.
//
//   magpie-bench-worker TASK FILE RUNS      TASK: decode | decode-srgb | thumb | raw-decode | raw-thumb
//   magpie-bench-worker encode-avif FILE RUNS QUALITY SPEED   (FILE decoded once, untimed; prints outputBytes too)
//   magpie-bench-worker exec RUNS BASELINE... -- COMMAND...   (an external tool; see Spawn.swift)
// Exit status 1 when the task fails; 3 (after printing `unsupported: REASON`) when this build has no
// coder for the file's format, so magpie-format-bench can tell a missing coder from a broken one.
//
// Imports: MagpieCore (ImageCoderRegistry, PixelSize, Image.resized, ImageFormat, MagpieError) and CImageCodecs'
// mg_* functions for the raw tasks; Spawn.swift names no Magpie module.
import CImageCodecs
import FoundationEssentials
import MagpieCore
#if canImport(Glibc)
import Glibc
#endif

/// What magpie-bench reads back (one JSON line).
struct Measurement: Codable {
    var medianMs: Double
    var peakRSSKiB: Int
    /// `exec` only: the median time of the baseline command, already subtracted from `medianMs`.
    var baselineMs: Double? = nil
    /// `exec` only: this process's own peak RSS, which a child's ru_maxrss cannot go below.
    var floorKiB: Int? = nil
    /// `encode-*` only: the size of the encoded output.
    var outputBytes: Int? = nil
    /// The median CPU time of one timed run, every thread of this process (user + system): on one pinned core,
    /// what the item costs whatever else the machine runs.
    var medianCpuMs: Double? = nil
}

let thumbBox = PixelSize(width: 256, height: 256)

/// Work done once per timed run by each task but `thumb` (``thumbnail(ofFile:)``).
func runTask(_ task: String, _ data: Data) throws {
    switch task {
    case "decode":
        _ = try ImageCoderRegistry.shared.decode(data)
    case "decode-srgb":
        // The same decode, converted to sRGB through the file's profile (lcms2): its cost over `decode` is the row.
        var options = ImageDecodingOptions()
        options.colorSpace = .sRGB
        _ = try ImageCoderRegistry.shared.decode(data, options: options)
    case "raw-decode", "raw-thumb":
        // The C wrapper alone: no orientation, no Swift image model. raw-thumb is the
        // DCT-scaled JPEG decode the thumbnail path starts with (the codec floor).
        var bitmap = mg_bitmap()
        var error = mg_error()
        var limits = mg_limits(max_pixels: 0, max_total_bytes: 0, max_frames: 0)
        let status = data.withUnsafeBytes { raw -> Int32 in
            let p = raw.bindMemory(to: UInt8.self).baseAddress!
            switch (ImageFormat(sniffing: data), task) {
            case (.jpeg, "raw-decode"): return mg_jpeg_decode(p, raw.count, 0, 0, 0, nil, &limits, &bitmap, nil, &error)
            case (.jpeg, _):
                var header = mg_jpeg_header()
                _ = mg_jpeg_read_header(p, raw.count, &header, &error)
                let fit = PixelSize(width: Int(header.width), height: Int(header.height)).fitting(in: thumbBox)
                return mg_jpeg_decode(
                    p, raw.count, UInt32(fit.width), UInt32(fit.height), JPEGCoder.decodeFlags, nil, &limits, &bitmap, nil, &error)
            case (.png, "raw-decode"): return mg_png_decode(p, raw.count, &limits, &bitmap, &error)
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
    guard let status = try? String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/self/status")), as: UTF8.self) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}

// Its own copy of MagpieBenchSupport's median: the worker stays off that target, which imports full Foundation.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func milliseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
}

/// The thumbnail task, from the file as a thumbnail worker gets it: the file is read as it is decoded (the JPEG coder
/// reads it in windows), never whole, as Pillow reads it through its file object.
func thumbnail(ofFile path: String) throws {
    let image = try ImageCoderRegistry.shared.decode(contentsOfFile: path, options: .init(targetSize: thumbBox))
    let small = try image.resized(toFit: thumbBox)
    _ = try ImageCoderRegistry.shared.encode(small, as: .jpeg, options: .init(quality: 80))
}

func child(task: String, path: String, runs: Int, parameters: [Int]) throws -> Measurement {
    if task == "thumb" { return try measure(runs: runs) { try thumbnail(ofFile: path); return nil } }
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    // One timed run; returns the output size for the encode tasks.
    let work: () throws -> Int?
    switch task {
    case "encode-avif":
        // The pixels are decoded once, outside the timing: only the encode is measured.
        let image = try ImageCoderRegistry.shared.decode(data)
        var options = ImageEncodingOptions(quality: parameters[0])
        options.speed = parameters[1]
        work = { try ImageCoderRegistry.shared.encode(image, as: .avif, options: options).count }
    default:
        work = { try runTask(task, data); return nil }
    }
    return try measure(runs: runs, work)
}

/// The CPU time this process has used so far, all threads, user + system, in ms.
func processCPUMilliseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1e6
}

/// Two warm-up runs of `work`, then `runs` timed ones: their median wall and CPU time, the peak RSS, and the output size if any.
func measure(runs: Int, _ work: () throws -> Int?) throws -> Measurement {
    var outputBytes: Int?
    for _ in 0..<2 { outputBytes = try work() }  // warm-up
    var times: [Double] = [], cpu: [Double] = []
    let clock = ContinuousClock()
    for _ in 0..<runs {
        let cpuBefore = processCPUMilliseconds()
        times.append(milliseconds(clock.measure { _ = try? work() }))
        cpu.append(processCPUMilliseconds() - cpuBefore)
    }
    return Measurement(medianMs: median(times), peakRSSKiB: peakRSSKiB(), outputBytes: outputBytes, medianCpuMs: median(cpu))
}

/// Whether `error` says this build has no decoder or encoder for the format (a coder not merged yet), not that one failed.
func isUnsupportedFormat(_ error: any Error) -> Bool {
    switch error as? MagpieError {
    case .decodingFailed(reason: .unsupportedFormat)?, .encodingFailed(reason: .unsupportedFormat)?: true
    default: false
    }
}

let arguments = CommandLine.arguments
if arguments.count > 4, arguments[1] == "exec", let runs = Int(arguments[2]), let split = arguments.firstIndex(of: "--"),
    split > 3, split + 1 < arguments.count
{
    do {
        let m = try measureCommand(runs: runs, baseline: Array(arguments[3..<split]), command: Array(arguments[(split + 1)...]))
        print(String(decoding: try JSONEncoder().encode(m), as: UTF8.self))
        exit(0)
    } catch {
        print("error: \(error)")
        exit(1)
    }
}
let parameterCount = arguments.count > 1 && arguments[1].hasPrefix("encode-") ? 2 : 0
guard arguments.count == 4 + parameterCount, let runs = Int(arguments[3]) else {
    print("usage: magpie-bench-worker TASK FILE RUNS | encode-avif FILE RUNS QUALITY SPEED | exec RUNS BASELINE... -- COMMAND...")
    exit(2)
}
let parameters = arguments.dropFirst(4).compactMap { Int($0) }
guard parameters.count == parameterCount else {
    print("error: QUALITY and SPEED must be integers")
    exit(2)
}
do {
    let m = try child(task: arguments[1], path: arguments[2], runs: runs, parameters: parameters)
    print(String(decoding: try JSONEncoder().encode(m), as: UTF8.self))
} catch {
    print(isUnsupportedFormat(error) ? "unsupported: \(error)" : "error: \(error)")
    exit(isUnsupportedFormat(error) ? 3 : 1)
}
