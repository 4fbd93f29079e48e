// magpie-format-bench: the wave-2 formats and colour rows. Magpie side by side with Pillow, pillow-heif and the
// formats' own command-line decoders/encoders in one run, and the cost of converting a Display P3 JPEG to sRGB.
//
//   magpie-format-bench --formats DIR [--runs N] [--python PYTHON] [--heif-python PYTHON] [--quality Q] [--speed S]
// DIR holds the inputs scripts/bench makes (see `inputs` below). Every cell is a fresh process: Magpie's is
// magpie-bench-worker (built next to this binary, linking only MagpieCore, through the generic
// ImageCoderRegistry API), Pillow's is pillow_formats.py under --python, the HEIC cell's Pillow is --heif-python
// (which must import pillow_heif), and each command-line tool (found on PATH, run by absolute path) is timed by the
// worker's `exec` mode as a process per run minus the cost of spawning /bin/true.
// A peer that is not installed is reported as skipped. One that is installed but fails, a Magpie cell that fails,
// and a Magpie cell whose format this build has no coder for ("unsupported format") are each reported in the
// table and listed at the end, and the exit status is then 1. With MAGPIE_BENCH_RATIOS set, appends the chart's
// ratios and the target verdicts (every decode ≤ 1.0× the best peer; sRGB conversion ≤ +15 %) to that file.
// Imports Foundation and MagpieBenchSupport only: nothing here decodes an image itself.
import Foundation
import MagpieBenchSupport

var arguments = Array(CommandLine.arguments.dropFirst())
var runs = 10
var formatsDirectory = ".build-bench/formats"
var pythonArgument: String?
var heifPythonArgument: String?
var quality = 60
var speed = 6
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("magpie-format-bench: \(message)\n".utf8))
    exit(2)
}
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    guard !arguments.isEmpty else { fail("\(argument): unknown option, or its value is missing") }
    let value = arguments.removeFirst()
    switch argument {
    case "--runs": runs = max(1, Int(value) ?? runs)
    case "--formats": formatsDirectory = value
    case "--python": pythonArgument = value
    case "--heif-python": heifPythonArgument = value
    case "--quality": quality = Int(value) ?? quality
    case "--speed": speed = Int(value) ?? speed
    default: fail("unknown option \(argument)")
    }
}

/// The inputs, as scripts/bench makes them in DIR (it describes how in the report).
enum Input {
    static let avif = "phone.avif"
    static let heic = "phone-grid.heic"
    static let jxl = "phone.jxl"
    static let tiff = "phone.tif"
    static let p3JPEG = "phone-p3.jpg"
    static let encodeSource = "photo-1600x1200.png"
}

let bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
let worker = bin.appendingPathComponent("magpie-bench-worker").path
guard FileManager.default.isExecutableFile(atPath: worker) else { fail("\(worker) missing: build magpie-bench-worker") }
let pillowScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pillow_formats.py").path
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-format-bench-\(getpid())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
// The tools pick their output format from the file name: these names write to /dev/null.
let nullY4M = scratch.appendingPathComponent("null.y4m").path
let nullPPM = scratch.appendingPathComponent("null.ppm").path
for link in [nullY4M, nullPPM] { try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/null") }

/// Runs a command to completion; nil when it cannot start.
func run(_ executable: String, _ arguments: [String]) -> FinishedProcess? { runToCompletion(executable, arguments) }

/// What magpie-bench-worker and pillow_formats.py print.
struct Measurement: Codable {
    var medianMs: Double
    var peakRSSKiB: Int
    var baselineMs: Double?
    var floorKiB: Int?
    var outputBytes: Int?
}

/// One cell of the tables.
enum Cell {
    case measured(Measurement)
    /// Not installed, or its input could not be made: the reason.
    case skipped(String)
    /// Magpie only: this build has no coder for the format (until the wave-2 coders are merged).
    case unsupported(String)
    case failed(String)

    var measurement: Measurement? {
        if case .measured(let m) = self { return m }
        return nil
    }
}

/// Every failed or unsupported cell, listed after the tables; any makes the exit status 1.
/// (The functions that read this file's globals are @MainActor: top-level variables of main.swift are.)
var failures: [String] = []

/// Runs `executable` (a worker or a Python) and reads its JSON line; exit status 3 is the worker's "unsupported".
@MainActor
func measure(_ who: String, _ what: String, _ executable: String, _ arguments: [String]) -> Cell {
    FileHandle.standardError.write(Data("magpie-format-bench: \(who), \(what)\n".utf8))
    let cell: Cell
    if let finished = run(executable, arguments) {
        let line = finished.output.trimmingCharacters(in: .whitespacesAndNewlines)
        if finished.status == 0, let m = try? JSONDecoder().decode(Measurement.self, from: Data(line.utf8)) {
            return .measured(m)
        } else if finished.status == 3, line.hasPrefix("unsupported: ") {
            cell = .unsupported(String(line.dropFirst("unsupported: ".count)))
        } else {
            let said = [line, finished.errorTail].filter { !$0.isEmpty }.joined(separator: " | ").prefix(300)
            let shown = ([URL(fileURLWithPath: executable).lastPathComponent] + arguments.prefix(8)).joined(separator: " ")
            cell = .failed("`\(shown)` failed (exit status \(finished.status)): \(said)")
        }
    } else {
        cell = .failed("\(executable): cannot start")
    }
    switch cell {
    case .unsupported(let reason): failures.append("\(who), \(what): unsupported in this build (\(reason))")
    case .failed(let reason): failures.append("\(who), \(what): \(reason)")
    default: break
    }
    if case .measured = cell {} else { FileHandle.standardError.write(Data("magpie-format-bench: FAILED: \(failures.last ?? "")\n".utf8)) }
    return cell
}

/// The absolute path of an input, or nil when scripts/bench could not make it.
@MainActor
func input(_ name: String) -> String? {
    let path = URL(fileURLWithPath: formatsDirectory).appendingPathComponent(name).standardizedFileURL.path
    return FileManager.default.fileExists(atPath: path) ? path : nil
}
func missing(_ name: String) -> Cell { .skipped("no input (\(name) was not made)") }

/// A Python that must import `module` when it is given; a bare name is looked up on PATH.
@MainActor
func python(_ argument: String?, importing module: String) -> String? {
    guard let argument else { return nil }
    guard let path = which(argument) else { fail("--python \(argument): no such executable") }
    guard let finished = run(path, ["-c", "import \(module)"]), finished.status == 0 else { fail("\(path) cannot import \(module)") }
    return path
}
let pillowPython = python(pythonArgument, importing: "PIL")
let heifPython = python(heifPythonArgument, importing: "pillow_heif")

@MainActor
func magpie(_ task: String, _ name: String, _ extra: [String] = []) -> Cell {
    guard let path = input(name) else { return missing(name) }
    return measure("Magpie", "\(task) \(name)", worker, [task, path, "\(runs)"] + extra)
}

@MainActor
func pillow(_ python: String?, _ label: String, _ task: String, _ name: String, _ extra: [String] = []) -> Cell {
    guard let python else { return .skipped("not installed") }
    guard let path = input(name) else { return missing(name) }
    return measure(label, "\(task) \(name)", python, [pillowScript, task, path, "\(runs)"] + extra)
}

/// A command-line tool, a process per run, minus the cost of spawning /bin/true; `command` gets the tool's path first.
@MainActor
func tool(_ name: String, _ what: String, _ file: String, _ command: (String, String) -> [String]) -> Cell {
    guard let executable = which(name) else { return .skipped("not installed") }
    guard let path = input(file) else { return missing(file) }
    return measure(name, "\(what) \(file)", worker, ["exec", "\(runs)", "/bin/true", "--"] + command(executable, path))
}

/// One row: Magpie and its peers on one task.
struct Row {
    let title: String
    let input: String
    /// The target key (Benchmarks/report.py) when the row is a decode with the ≤ 1.0× target.
    let target: String?
    let magpie: Cell
    let peers: [(name: String, cell: Cell)]

    var best: (name: String, measurement: Measurement)? {
        peers.compactMap { peer in peer.cell.measurement.map { (name: peer.name, measurement: $0) } }
            .min { $0.measurement.medianMs < $1.measurement.medianMs }
    }
}

func ratio(_ a: Measurement?, _ b: Measurement?) -> Double? {
    guard let a, let b, b.medianMs > 0 else { return nil }
    return a.medianMs / b.medianMs
}
func mib(_ m: Measurement) -> String {
    let text = String(format: "%.1f MiB", Double(m.peakRSSKiB) / 1024)
    // A child cannot report less than the worker's own peak: at or near it, the true peak may be lower.
    if let floor = m.floorKiB, m.peakRSSKiB <= floor + 1024 { return "≤ " + text }
    return text
}
func describe(_ cell: Cell, against magpie: Measurement?) -> String {
    switch cell {
    case .measured(let m):
        var text = String(format: "%.1f ms · ", m.medianMs) + mib(m)
        if let bytes = m.outputBytes { text += String(format: " · %.1f KB", Double(bytes) / 1000) }
        if let r = ratio(magpie, m) { text += String(format: " (%.2f×)", r) }
        return text
    case .skipped(let reason): return "skipped (\(reason))"
    case .unsupported: return "**unsupported format** (no coder in this build)"
    case .failed: return "**FAILED**"
    }
}

/// An external tool's output file: avifenc writes here, and its size is read back after the runs.
let avifencOutput = scratch.appendingPathComponent("avifenc.avif").path
let q = ["\(quality)", "\(speed)"]
// libavif ≥ 1.0 maps quality to a quantizer as ((100 - q) × 63 + 50) / 100; avifenc 0.11.1 takes the quantizer, and
// 4:2:0 as Pillow's AVIF save defaults to (avifenc would pick 4:4:4 for a PNG): then both write about the same size.
let quantizer = ((100 - quality) * 63 + 50) / 100
var rows: [Row] = []
rows.append(
    Row(
        title: "AVIF decode", input: Input.avif, target: "w2-avif-decode", magpie: magpie("decode", Input.avif),
        peers: [
            ("Pillow", pillow(pillowPython, "Pillow", "decode", Input.avif)),
            ("avifdec", tool("avifdec", "decode", Input.avif) { [$0, "--info", $1] }),
        ]))
rows.append(
    Row(
        title: "AVIF → 256 px JPEG thumbnail", input: Input.avif, target: nil, magpie: magpie("thumb", Input.avif),
        peers: [("Pillow", pillow(pillowPython, "Pillow", "thumb", Input.avif))]))
var avifenc = tool("avifenc", "encode", Input.encodeSource) {
    [$0, "-s", "\(speed)", "--min", "\(quantizer)", "--max", "\(quantizer)", "-y", "420", $1, avifencOutput]
}
// avifenc's output size: the worker ran it, this process reads what it last wrote.
if case .measured(var m) = avifenc, let size = (try? FileManager.default.attributesOfItem(atPath: avifencOutput))?[.size] as? Int {
    m.outputBytes = size
    avifenc = .measured(m)
}
rows.append(
    Row(
        title: "AVIF encode (quality \(quality), speed \(speed))", input: Input.encodeSource, target: nil,
        magpie: magpie("encode-avif", Input.encodeSource, q),
        peers: [("Pillow", pillow(pillowPython, "Pillow", "encode-avif", Input.encodeSource, q)), ("avifenc", avifenc)]))
rows.append(
    Row(
        title: "HEIC decode (grid)", input: Input.heic, target: "w2-heic-decode", magpie: magpie("decode", Input.heic),
        peers: [
            ("pillow-heif", pillow(heifPython, "pillow-heif", "decode", Input.heic)),
            ("heif-convert", tool("heif-convert", "decode", Input.heic) { [$0, "--quiet", $1, nullY4M] }),
        ]))
rows.append(
    Row(
        title: "JPEG XL decode", input: Input.jxl, target: "w2-jxl-decode", magpie: magpie("decode", Input.jxl),
        peers: [("djxl", tool("djxl", "decode", Input.jxl) { [$0, $1, nullPPM, "--quiet"] })]))
rows.append(
    Row(
        title: "TIFF decode", input: Input.tiff, target: "w2-tiff-decode", magpie: magpie("decode", Input.tiff),
        peers: [("Pillow", pillow(pillowPython, "Pillow", "decode", Input.tiff))]))
// The sRGB row compares a decode that may use the second core with one that uses one, so it is taken as alternated
// pairs of worker processes (plain then converting, the first side swapping pair to pair), one ratio a pair, judged
// like scripts/magpie_scripts/pairs.py judges the pinned rows: the median ratio, and "noisy" when the pairs spread by
// 10 % of it or more; when the first pairs do, two more are measured, and from five pairs on the spread leaves out the
// highest and the lowest ratio. A pair during which other processes (or stolen time) took 5 % of a core or more measured
// the neighbour: it is set aside and measured again, at most twice, the last attempt standing.
let srgbPairCount = 5
let noisySpread = 0.10, disturbedPercent = 5.0, remeasures = 2, extraPairs = 2, trimFrom = 5

/// (largest − smallest) / median of the ratios, from `trimFrom` of them on without the highest and the lowest; nil
/// from fewer than two.
func judgedSpread(_ ratios: [Double]) -> Double? {
    let sorted = ratios.sorted()
    let judged = sorted.count >= trimFrom ? Array(sorted.dropFirst().dropLast()) : sorted
    guard judged.count >= 2, let low = judged.first, let high = judged.last else { return nil }
    return (high - low) / median(judged)
}

/// One alternated pair of the sRGB row.
struct SRGBPair {
    var plain: Cell
    var srgb: Cell
    /// Other processes' CPU during the pair, in % of one core; nil without /proc/stat.
    var other: Double?
    var ratio: Double? {
        guard let s = srgb.measurement?.medianMs, let p = plain.measurement?.medianMs, p > 0 else { return nil }
        return s / p
    }
}

@MainActor
func measureSRGBPair(plainFirst: Bool) -> SRGBPair {
    let busy0 = machineBusySeconds(), children0 = waitedChildrenCPUSeconds(), start = Date()
    let first = magpie(plainFirst ? "decode" : "decode-srgb", Input.p3JPEG)
    let second = magpie(plainFirst ? "decode-srgb" : "decode", Input.p3JPEG)
    let wall = Date().timeIntervalSince(start)
    var other: Double?
    if let busy0, let busy1 = machineBusySeconds(), wall > 0 {
        other = max(0, (busy1 - busy0) - (waitedChildrenCPUSeconds() - children0)) / wall * 100
    }
    return plainFirst ? SRGBPair(plain: first, srgb: second, other: other) : SRGBPair(plain: second, srgb: first, other: other)
}

var srgbPairs: [SRGBPair] = [], srgbSetAside: [SRGBPair] = []
@MainActor
func measureSRGBPairs(_ indices: Range<Int>) {
    for index in indices {
        var pair = measureSRGBPair(plainFirst: index % 2 == 0)
        for _ in 0..<remeasures where (pair.other ?? 0) >= disturbedPercent && pair.ratio != nil {
            srgbSetAside.append(pair)
            pair = measureSRGBPair(plainFirst: index % 2 == 0)
        }
        srgbPairs.append(pair)
    }
}
measureSRGBPairs(0..<srgbPairCount)
let srgbExtended = srgbPairs.allSatisfy { $0.ratio != nil } && (judgedSpread(srgbPairs.compactMap(\.ratio)) ?? 0) >= noisySpread
if srgbExtended { measureSRGBPairs(srgbPairCount..<(srgbPairCount + extraPairs)) }
/// The pair whose ratio is the median, or the first that was not measured.
let srgbMiddle: SRGBPair = srgbPairs.first { $0.ratio == nil } ?? srgbPairs.sorted { $0.ratio! < $1.ratio! }[srgbPairs.count / 2]
let srgbRatios = srgbPairs.compactMap(\.ratio)
let srgbSpread: Double? = judgedSpread(srgbRatios)

@MainActor
func version(_ executable: String?, _ arguments: [String]) -> String {
    guard let executable, let finished = run(executable, arguments) else { return "not installed" }
    let text = (finished.output + "\n" + finished.errors).split(separator: "\n").first.map(String.init) ?? "?"
    return text.trimmingCharacters(in: .whitespaces)
}
print("Median of \(runs) runs after 2 warm-ups, each cell a fresh process; a peer's cell reads `ms · peak RSS (Magpie/peer)`, below 1.00× Magpie is faster.")
print()
print("- Pillow: " + (pillowPython.map { "\(version($0, ["-c", "import PIL; from PIL import features; print(PIL.__version__, 'AVIF:', features.check('avif'))"])) (`\($0)`)" } ?? "not installed (skipped)"))
print("- pillow-heif: " + (heifPython.map { "\(version($0, ["-c", "import pillow_heif; print(pillow_heif.__version__, 'libheif', pillow_heif.libheif_version())"])) (`\($0)`)" } ?? "not installed (skipped)"))
print("- avifdec / avifenc: \(version(which("avifdec"), ["--version"])); heif-convert: \(version(which("heif-convert"), ["--help"])); djxl: \(version(which("djxl"), ["--version"]))")
print()
print("| row | input | Magpie | Pillow | command-line tool | Magpie / best peer | target |")
print("|---|---|---:|---:|---:|---:|---|")
for row in rows {
    let magpieMeasurement = row.magpie.measurement
    let magpieText: String
    switch row.magpie {
    case .measured(let m):
        magpieText = String(format: "%.1f ms · ", m.medianMs) + mib(m) + (m.outputBytes.map { String(format: " · %.1f KB", Double($0) / 1000) } ?? "")
    default: magpieText = describe(row.magpie, against: nil)
    }
    let pillowPeer = row.peers.first { $0.name == "Pillow" || $0.name == "pillow-heif" }
    let toolPeer = row.peers.first { $0.name != "Pillow" && $0.name != "pillow-heif" }
    let pillowText = pillowPeer.map { ($0.name == "Pillow" ? "" : "\($0.name): ") + describe($0.cell, against: magpieMeasurement) } ?? "–"
    let toolText = toolPeer.map { "\($0.name): " + describe($0.cell, against: magpieMeasurement) } ?? "–"
    let best = row.best
    let r = ratio(magpieMeasurement, best?.measurement)
    let ratioText = r.map { String(format: "%.2f× ", $0) + (best?.name ?? "") } ?? "–"
    var verdict = "–"
    if let key = row.target {
        verdict = r.map { $0 <= 1.0 ? "≤ 1.00×: met" : "≤ 1.00×: **not met**" } ?? "≤ 1.00×: not measured"
        if let r, let best {
            BenchLog.target(key, "\(row.input) vs \(best.name) (the fastest peer)", measured: String(format: "%.2f× ", r) + best.name, limit: "≤ 1.00×", met: r <= 1.0)
        }
    }
    for peer in row.peers {
        if let pr = ratio(magpieMeasurement, peer.cell.measurement) { BenchLog.ratio("formats", "\(row.title) vs \(peer.name)", pr) }
    }
    print("| \(row.title) | \(row.input) | \(magpieText) | \(pillowText) | \(toolText) | \(ratioText) | \(verdict) |")
}
print()
print("### Cost of converting to sRGB")
print()
print("Magpie alone, the same file: a plain decode (`.asStored`, the pixels as stored, profile attached) against a decode with "
    + "`options.colorSpace = .sRGB` (the pixels converted from the embedded Display P3 profile through lcms2, beside the decode on a "
    + "second thread): \(srgbPairs.count) alternated pairs of worker processes, each the median of \(runs) decodes, the pair with the "
    + "median ratio shown. A verdict only when the pairs agree within \(Int(noisySpread * 100)) % of their median (from "
    + "\(trimFrom) pairs on without the highest and the lowest ratio; \(extraPairs) more pairs when the first \(srgbPairCount) "
    + "disagree\(srgbExtended ? ", as they did in this run" : "")); a pair during which other processes took "
    + "\(Int(disturbedPercent)) % of a core or more is measured again (at most \(remeasures) times).")
print()
print("| input | decode | decode + sRGB | added (median pair) | pairs: added | spread | other processes (most) | target | verdict |")
print("|---|---:|---:|---:|---|---:|---:|---|---|")
let srgbRatio = srgbRatios.isEmpty || srgbRatios.count < srgbPairs.count ? nil : median(srgbRatios)
let srgbVerdict: String? = srgbRatio.map { ratio in
    if let spread = srgbSpread, spread >= noisySpread { return "noisy" }
    return ratio <= 1.15 ? "met" : "not met"
}
let added = { (ratio: Double) in String(format: "%+.1f %%", (ratio - 1) * 100) }
let srgbSpreadText = srgbSpread.map { String(format: "%.0f %%", $0 * 100) } ?? "–"
let srgbOther = srgbPairs.compactMap(\.other).max().map { String(format: "%.0f %%", $0) } ?? "–"
print("| \(Input.p3JPEG) | \(describe(srgbMiddle.plain, against: nil)) | \(describe(srgbMiddle.srgb, against: nil)) "
    + "| \(srgbRatio.map(added) ?? "–") | \(srgbRatios.map(added).joined(separator: ", ")) | \(srgbSpreadText) | \(srgbOther) "
    + "| ≤ +15 % | \(srgbVerdict.map { $0 == "not met" ? "**not met**" : $0 } ?? "not measured") |")
if !srgbSetAside.isEmpty {
    print()
    print("Set aside and measured again: " + srgbSetAside.map { pair in
        "a pair at \(pair.ratio.map(added) ?? "–") while other processes took \(pair.other.map { String(format: "%.0f %%", $0) } ?? "–") of a core"
    }.joined(separator: "; ") + ".")
}
if let srgbRatio, let srgbVerdict {
    BenchLog.ratio("colour", "\(Input.p3JPEG): decode + sRGB vs plain decode", srgbRatio, note: "reference: Magpie's own plain decode")
    BenchLog.target(
        "w2-srgb", "\(Input.p3JPEG) (Display P3 JPEG): decode with colorSpace = .sRGB vs plain decode, \(srgbPairs.count) alternated pairs, spread \(srgbSpreadText)",
        measured: added(srgbRatio), limit: "≤ +15 %", verdict: srgbVerdict)
}
try? FileManager.default.removeItem(at: scratch)
if !failures.isEmpty {
    print()
    print("**Not measured in this run (a Magpie coder missing from this build, or an installed tool that did not run):**")
    print()
    for failure in failures { print("- \(failure.replacingOccurrences(of: "|", with: "\\|"))") }
    FileHandle.standardError.write(Data("magpie-format-bench: \(failures.count) cell(s) failed or unsupported (listed above); exit status 1\n".utf8))
    exit(1)
}
