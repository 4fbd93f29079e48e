// magpie-bench: decode and thumbnail benchmarks, Magpie side by side with the raw C codec
// loop, Pillow, djpeg and libvips in the same run. Every (tool, task, file) runs in its own
// child process so that peak RSS belongs to that task alone.
//
//   magpie-bench [--runs N] [--python PATH] FILE...
// Each measurement is one run of magpie-bench-worker (built next to this binary). Prints two
// Markdown tables (decode, thumb); with MAGPIE_BENCH_RATIOS set, also appends the chart's
// ratios and the part 1 target verdicts to that file (see BenchLog.swift).
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
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-bench-\(getpid())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }
// Without --python: python3 when it has PIL, else the venv scripts/bench makes.
let pillowPython = python.map { [$0] } ?? [which("python3"), ".build-bench/venv/bin/python"].compactMap { $0 }
let usablePython = pillowPython.first { capture($0, ["-c", "import PIL"]) != nil }
let peers = Peers(
    worker: URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("magpie-bench-worker").path,
    python: usablePython ?? "python3", hasPillow: usablePython != nil,
    djpeg: which("djpeg"), vips: which("vips"), vipsthumbnail: which("vipsthumbnail"), scratch: scratch)

/// The measured cells of one task on one file.
struct Cells {
    var magpie, raw, pillow, djpeg, vips: Measurement?
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
func peerCell(_ magpie: Measurement?, _ peer: Measurement?) -> String {
    guard let peer else { return "skipped" }
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
    let progressive = image.format == .jpeg && ((try? JPEGCoder().header(of: data))?.isProgressive ?? false)
    var result = FileResult(name: name, width: image.width, height: image.height, format: image.format, isProgressive: progressive)
    FileHandle.standardError.write(Data("magpie-bench: \(name)\n".utf8))
    result.decode = Cells(
        magpie: peers.magpie("decode", path, runs: runs),
        raw: image.format == .jpeg || image.format == .png ? peers.magpie("raw-decode", path, runs: runs) : nil,
        pillow: peers.pillow("decode", path, runs: runs),
        djpeg: image.format == .jpeg ? peers.djpeg(path, scale: nil, runs: runs) : nil,
        vips: peers.vipsDecode(path, runs: runs))
    // djpeg's thumbnail column uses the DCT scale Magpie picks for 256 px.
    let scale = "1/\(max(1, min(8, min(image.width, image.height) / 256)))"
    result.thumb = Cells(
        magpie: peers.magpie("thumb", path, runs: runs),
        raw: image.format == .jpeg ? peers.magpie("raw-thumb", path, runs: runs) : nil,
        pillow: peers.pillow("thumb", path, runs: runs),
        djpeg: image.format == .jpeg ? peers.djpeg(path, scale: scale, runs: runs) : nil,
        vips: peers.vipsThumb(path, runs: runs))
    results.append(result)
}

let startup = peers.vipsStartup()
print("Median of \(runs) runs after 2 warm-ups, each cell a fresh process. A peer's cell reads `ms (Magpie/peer)`: below 1.00× Magpie is faster.")
print("Pillow: \(peers.hasPillow ? "yes" : "not installed (skipped)"); djpeg: \(peers.djpeg ?? "not installed (skipped)"); "
    + "vips: \(peers.vips.map { _ in "yes, start-up left out of its cells: `vips --vips-version` takes \(ms(startup)) ms and peaks at \(mib(startup)) MiB" } ?? "not installed (skipped)").")
for (task, title) in [("decode", "Decode"), ("thumb", "Thumbnail")] {
    print()
    print("### \(title)")
    print()
    print("| file | size | Magpie ms | raw C | Pillow | djpeg | vips | Magpie MiB | Pillow MiB | vips MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for result in results {
        let c = task == "decode" ? result.decode : result.thumb
        print("| \(result.name) | \(result.width)×\(result.height) \(result.kind) | \(ms(c.magpie)) | \(peerCell(c.magpie, c.raw)) | \(peerCell(c.magpie, c.pillow)) "
            + "| \(peerCell(c.magpie, c.djpeg)) | \(peerCell(c.magpie, c.vips)) | \(mib(c.magpie)) | \(mib(c.pillow)) | \(mib(c.vips)) |")
    }
}
logRatiosAndTargets(results)
