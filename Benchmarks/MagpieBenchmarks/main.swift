// magpie-bench: decode and thumbnail benchmarks, Magpie side by side with the raw C codec
// loop, Pillow, djpeg and libvips in the same run. Every (tool, task, file) runs in its own
// child process so that peak RSS belongs to that task alone.
//
//   magpie-bench [--runs N] [--python PYTHON] FILE...
// Each measurement is one run of magpie-bench-worker (built next to this binary). Prints two
// Markdown tables (decode, thumb) and the thumbnail worker's peak RSS; with MAGPIE_BENCH_RATIOS
// set, also appends the chart's ratios and the target verdicts to that file (see BenchLog.swift).
// --python: the Python with Pillow, a path or a bare name looked up on PATH; it must import PIL
// (else exit 2). Without it: python3 on PATH, else .build-bench/venv/bin/python, else Pillow is
// reported as not installed. A peer that is not installed is reported as skipped; an installed
// one (or the worker) that fails or prints no measurement is reported, and the exit status is 1.
import Foundation
import Magpie
import MagpieBenchSupport

var arguments = Array(CommandLine.arguments.dropFirst())
var runs = 10
var python: String?
var files: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--runs" where !arguments.isEmpty: runs = max(1, Int(arguments.removeFirst()) ?? runs)
    case "--python" where !arguments.isEmpty: python = arguments.removeFirst()
    default: files.append(argument)
    }
}
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("magpie-bench: \(message)\n".utf8))
    exit(2)
}
/// The Pillow version a Python reports, or why it cannot.
func pillowVersion(_ python: String) throws -> String {
    try capture(python, ["-c", "import PIL; print(PIL.__version__)"]).trimmingCharacters(in: .whitespacesAndNewlines)
}
let pillow: (python: String, version: String)?
if let python {
    // Asked for: it must be there and import PIL, or the bench stops here.
    guard let path = which(python) else { fail("Pillow: --python \(python): no such executable (as a path, or on PATH)") }
    do { pillow = (path, try pillowVersion(path)) } catch { fail("Pillow: --python \(python) (\(path)) cannot import PIL: \(error)") }
} else {
    pillow = [which("python3"), which(".build-bench/venv/bin/python")].compactMap { $0 }.lazy
        .compactMap { path in (try? pillowVersion(path)).map { (python: path, version: $0) } }.first
}
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-bench-\(getpid())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }
let peers = Peers(
    worker: URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("magpie-bench-worker").path,
    python: pillow?.python,
    djpeg: which("djpeg"), vips: which("vips"), vipsthumbnail: which("vipsthumbnail"), scratch: scratch)

/// The measured cells of one task on one file.
struct Cells {
    var magpie, raw, pillow, djpeg, vips: Measurement?
    /// The tools (`Magpie`, `raw C`, `Pillow`, `djpeg`, `vips`) whose cell failed: shown as failed, not skipped.
    var failed: Set<String> = []
}

/// Every failed cell, reported after the tables; any makes the exit status 1.
var failures: [String] = []

/// Runs one cell's measurement; a failure is recorded (and printed at once) instead of leaving a blank cell.
@MainActor
func measure(_ tool: String, _ what: String, into cells: inout Cells, _ body: () throws -> Measurement?) -> Measurement? {
    do {
        return try body()
    } catch {
        cells.failed.insert(tool)
        failures.append("\(tool), \(what): \(error)")
        FileHandle.standardError.write(Data("magpie-bench: FAILED: \(tool), \(what): \(error)\n".utf8))
        return nil
    }
}

/// One input file and its two rows.
struct FileResult {
    let name: String
    let width: Int
    let height: Int
    let format: ImageFormat
    let isProgressive: Bool
    var decode = Cells()
    var thumb = Cells()

    var megapixels: Double { Double(width * height) / 1e6 }
    var kind: String { format == .jpeg ? (isProgressive ? "progressive JPEG" : "baseline JPEG") : format.rawValue.uppercased() }
}

/// A cell's median in ms, or "skipped".
func ms(_ m: Measurement?) -> String { m.map { String(format: "%.1f", $0.medianMs) } ?? "skipped" }
/// A cell's peak RSS in MiB, or "skipped".
func mib(_ m: Measurement?) -> String {
    guard let m else { return "skipped" }
    guard m.peakRSSKiB > 0 else { return "n/a" }
    let text = String(format: "%.1f", Double(m.peakRSSKiB) / 1024)
    // A child cannot report less than the worker's own peak: at or near it, the true peak may be lower.
    if let floor = m.floorKiB, m.peakRSSKiB <= floor + 1024 { return "≤ " + text }
    return text
}
/// Magpie's median over the peer's, when both were measured.
func ratio(_ a: Measurement?, _ b: Measurement?) -> Double? {
    guard let a, let b, b.medianMs > 0 else { return nil }
    return a.medianMs / b.medianMs
}
/// A peer's cell: its time, and Magpie's time over it in parentheses.
func peerCell(_ magpie: Measurement?, _ peer: Measurement?, failed: Bool = false) -> String {
    guard let peer else { return failed ? "**FAILED**" : "skipped" }
    return ms(peer) + (ratio(magpie, peer).map { String(format: " (%.2f×)", $0) } ?? "")
}

var results: [FileResult] = []
for path in files {
    let name = URL(fileURLWithPath: path).lastPathComponent
    guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)),
        let image = try? ImageCoderRegistry.shared.decode(data, options: .init(onlyFirstFrame: true))
    else {
        FileHandle.standardError.write(Data("magpie-bench: \(path): cannot read or decode, skipped\n".utf8))
        continue
    }
    let progressive = image.format == .jpeg && ((try? JPEGCoder().storedHeader(of: data))?.isProgressive ?? false)
    var result = FileResult(name: name, width: image.width, height: image.height, format: image.format, isProgressive: progressive)
    FileHandle.standardError.write(Data("magpie-bench: \(name)\n".utf8))
    var decode = Cells(), thumb = Cells()
    decode.magpie = measure("Magpie", "decode \(name)", into: &decode) { try peers.magpie("decode", path, runs: runs) }
    if image.format == .jpeg || image.format == .png {
        decode.raw = measure("raw C", "decode \(name)", into: &decode) { try peers.magpie("raw-decode", path, runs: runs) }
    }
    decode.pillow = measure("Pillow", "decode \(name)", into: &decode) { try peers.pillow("decode", path, runs: runs) }
    if image.format == .jpeg {
        decode.djpeg = measure("djpeg", "decode \(name)", into: &decode) { try peers.djpeg(path, scale: nil, runs: runs) }
    }
    decode.vips = measure("vips", "decode \(name)", into: &decode) { try peers.vipsDecode(path, runs: runs) }
    // djpeg's thumbnail column uses the DCT scale Magpie picks for 256 px.
    let scale = "1/\(max(1, min(8, min(image.width, image.height) / 256)))"
    thumb.magpie = measure("Magpie", "thumb \(name)", into: &thumb) { try peers.magpie("thumb", path, runs: runs) }
    if image.format == .jpeg {
        thumb.raw = measure("raw C", "thumb \(name)", into: &thumb) { try peers.magpie("raw-thumb", path, runs: runs) }
    }
    thumb.pillow = measure("Pillow", "thumb \(name)", into: &thumb) { try peers.pillow("thumb", path, runs: runs) }
    if image.format == .jpeg {
        thumb.djpeg = measure("djpeg", "thumb \(name)", into: &thumb) { try peers.djpeg(path, scale: scale, runs: runs) }
    }
    thumb.vips = measure("vips", "thumb \(name)", into: &thumb) { try peers.vipsThumb(path, runs: runs) }
    result.decode = decode
    result.thumb = thumb
    results.append(result)
}

var startupCells = Cells()
let startup = measure("vips", "start-up (vips --vips-version)", into: &startupCells) { try peers.vipsStartup() }
print("Median of \(runs) runs after 2 warm-ups, each cell a fresh process. A peer's cell reads `ms (Magpie/peer)`: below 1.00× Magpie is faster.")
print("Pillow: \(pillow.map { "\($0.version) (`\($0.python)`)" } ?? "not installed (skipped)"); djpeg: \(peers.djpeg ?? "not installed (skipped)"); "
    + "vips: \(peers.vips.map { _ in "yes, start-up left out of its cells: `vips --vips-version` takes \(ms(startup)) ms and peaks at \(mib(startup)) MiB" } ?? "not installed (skipped)").")
for (task, title) in [("decode", "Decode"), ("thumb", "Thumbnail")] {
    print()
    print("### \(title)")
    print()
    print("| file | size | Magpie ms | raw C | Pillow | djpeg | vips | Magpie MiB | Pillow MiB | vips MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for result in results {
        let c = task == "decode" ? result.decode : result.thumb
        func cell(_ tool: String, _ m: Measurement?) -> String { peerCell(c.magpie, m, failed: c.failed.contains(tool)) }
        func rss(_ tool: String, _ m: Measurement?) -> String { c.failed.contains(tool) ? "**FAILED**" : mib(m) }
        print("| \(result.name) | \(result.width)×\(result.height) \(result.kind) | \(c.failed.contains("Magpie") ? "**FAILED**" : ms(c.magpie)) "
            + "| \(cell("raw C", c.raw)) | \(cell("Pillow", c.pillow)) | \(cell("djpeg", c.djpeg)) | \(cell("vips", c.vips)) "
            + "| \(rss("Magpie", c.magpie)) | \(rss("Pillow", c.pillow)) | \(rss("vips", c.vips)) |")
    }
}
printThumbnailWorkerRSS(results)
logRatiosAndTargets(results)
if !failures.isEmpty {
    print()
    print("**Failed in this run (an installed tool that did not run, or printed no measurement):**")
    print()
    for failure in failures { print("- \(failure.replacingOccurrences(of: "|", with: "\\|"))") }
    FileHandle.standardError.write(Data("magpie-bench: \(failures.count) cell(s) FAILED (listed above); exit status 1\n".utf8))
    exit(1)
}
