// magpie-proc-bench: processing speed and quality against Pillow, on the same pixels.
//
//   magpie-proc-bench [--runs N] [--python PYTHON] [--corpus DIR] [FILE...]
//
// --python: a path or a bare name looked up on PATH; it must import PIL (else exit 2). Without it:
// python3 on PATH, else .build-bench/venv/bin/python, else Pillow is reported as not installed.
// Any Pillow run that fails is reported in the output, and the exit status is 1.
//
// Speed: a Lanczos resize of a generated 15 MP image to 256 px wide, one of 750×402 to 512×274 (the filter alone, as
// `magpie serve` runs it after a 3/8 JPEG decode) and a Gaussian blur
// (σ = 10) of a generated 1600×1250 image, each side timing only the operation (median of
// N runs after two warm-ups). Inputs go to Pillow as raw bytes (pillow_processing.py, next to
// this file), so decoding is never timed and both sides see identical pixels.
// Quality: every JPEG in DIR (default ../shared/corpus/large) and every FILE, decoded by
// Magpie, resized to 256 px wide by Magpie and by Pillow (LANCZOS) from those same decoded
// pixels; PSNR in dB between the two (target ≥ 35 dB).
import Foundation
import Magpie
import MagpieBenchSupport

var runs = 12
var python: String?
var corpus = "../shared/corpus/large"
var files: [String] = []
var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func optionValue() -> String {
    guard !arguments.isEmpty else { fatalError("an option is missing its value") }
    return arguments.removeFirst()
}
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--runs": runs = max(1, Int(optionValue()) ?? runs)
    case "--python": python = optionValue()
    case "--corpus": corpus = optionValue()
    default: files.append(argument)
    }
}
if let entries = try? FileManager.default.contentsOfDirectory(atPath: corpus) {
    files += entries.sorted().filter { $0.lowercased().hasSuffix(".jpg") || $0.lowercased().hasSuffix(".jpeg") }
        .map { "\(corpus)/\($0)" }
}

let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pillow_processing.py").path
let pillow = findPillow(given: python)
print(pillow.map { "Pillow: `\($0)`.\n" } ?? "Pillow: not installed (skipped).\n")
/// Pillow runs that failed: listed at the end, and the exit status is 1.
var failures: [String] = []
/// The Pillow script's output for `arguments`; a failure (exit status, or output that is not a number when
/// `number`) is recorded in `failures` and gives nil.
@MainActor func pillowRun(_ python: String, _ what: String, _ arguments: [String], number: Bool = true) -> String? {
    guard let output = run(python, [script] + arguments) else {
        failures.append("Pillow, \(what): `pillow_processing.py \(arguments.first ?? "")` failed (its error is on stderr)")
        return nil
    }
    let text = output.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !number || Double(text) != nil else {
        failures.append("Pillow, \(what): printed \"\(text.prefix(120))\", not a time")
        return nil
    }
    return text
}
let work = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-proc-bench-\(getpid())")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: work) }

// MARK: Speed

struct Row {
    var name: String
    var magpie: Double
    var pillow: Double?
    /// The target this row is measured for, if any.
    var target: String?
}
var rows: [Row] = []

let large = try generatedImage(width: 5000, height: 3000)
let thumbSize = PixelSize(width: 256, height: Int((3000.0 * 256 / 5000).rounded()))
let resizeMs = try medianMs(runs) { _ = try ImageResampler.resize(large, to: thumbSize, filter: .lanczos3) }
var resizePillow: Double?
if let pillow {
    let path = try writeRaw(large, to: work.appendingPathComponent("large.raw"))
    resizePillow = pillowRun(pillow, "resize", ["resize", path, "5000", "3000", "RGB", "\(thumbSize.width)", "\(thumbSize.height)", "\(runs)"])
        .flatMap { Double($0) }
}
rows.append(Row(name: "resize 5000×3000 → \(thumbSize) (Lanczos-3)", magpie: resizeMs, pillow: resizePillow, target: "p4-resize"))

// The filter alone, no box pre-reduction: what `magpie serve` does to a 2000×1072 photo that no DCT scale brings to
// 512 px (decoded at 3/8, 750×402, then fit into 512×512).
let decoded = try generatedImage(width: 750, height: 402)
let fitSize = PixelSize(width: 512, height: 274)
let filterMs = try medianMs(runs * 4) { _ = try ImageResampler.resize(decoded, to: fitSize, filter: .lanczos3) }
var filterPillow: Double?
if let pillow {
    let path = try writeRaw(decoded, to: work.appendingPathComponent("decoded.raw"))
    filterPillow = pillowRun(pillow, "resize", ["resize", path, "750", "402", "RGB", "512", "274", "\(runs * 4)"])
        .flatMap { Double($0) }
}
rows.append(Row(name: "resize 750×402 → \(fitSize) (Lanczos-3, no pre-reduction)", magpie: filterMs, pillow: filterPillow))

let blurInput = try generatedImage(width: 1600, height: 1250)
let blur = BlurImageProcessor(blurRadius: 10)
let noOptions = ImageProcessingContext.default
var blurred: Image?
let blurMs = try medianMs(runs) { blurred = try blur.process(item: .image(Image(pixels: blurInput)), context: noOptions) }
var blurPillow: Double?
var blurPSNR: Double?
if let pillow {
    let path = try writeRaw(blurInput, to: work.appendingPathComponent("blur.raw"))
    blurPillow = pillowRun(pillow, "blur", ["blur", path, "1600", "1250", "RGB", "10", "\(runs)"]).flatMap { Double($0) }
    let out = work.appendingPathComponent("blur-pillow.raw").path
    if pillowRun(pillow, "blur quality", ["gaussian", path, "1600", "1250", "RGB", "10", out], number: false) != nil, let blurred,
        let theirs = FileManager.default.contents(atPath: out)
    {
        blurPSNR = psnr(blurred.pixels, theirs, channels: 3)
    }
}
rows.append(Row(name: "Gaussian blur σ=10, 1600×1250", magpie: blurMs, pillow: blurPillow, target: "p4-blur"))

print("### Speed (\(runs) runs, median)\n")
print("| Operation | Magpie (ms) | Pillow (ms) | Magpie/Pillow |")
print("|---|---:|---:|---:|")
for row in rows {
    let theirs = row.pillow.map { String(format: "%.1f", $0) } ?? (pillow == nil ? "skipped" : "**FAILED**")
    let ratio = row.pillow.map { String(format: "%.2f×", row.magpie / $0) } ?? "–"
    print("| \(row.name) | \(String(format: "%.1f", row.magpie)) | \(theirs) | \(ratio) |")
    if let pillow = row.pillow {
        BenchLog.ratio("processing", "\(row.name) vs Pillow", row.magpie / pillow)
        guard let key = row.target else { continue }
        BenchLog.target(key, row.name, measured: ratio + " Pillow", limit: "≤ 1.00×", met: row.magpie <= pillow)
    }
}
print("\nMagpie's resize box-averages by whole factors first while more than 2× remains (Pillow's reducing_gap=2);")
print("Pillow runs with its default reducing_gap=None, filtering every source pixel. The quality table shows the cost.")
if let blurPSNR { print("\nBlur output vs Pillow's GaussianBlur(10): PSNR \(String(format: "%.1f", blurPSNR)) dB.") }

// MARK: Quality

if let pillow, !files.isEmpty {
    print("\n### Resize quality: Magpie vs Pillow LANCZOS, 256 px wide, same decoded pixels\n")
    print("| File | Size | Thumbnail | PSNR (dB) |")
    print("|---|---|---|---:|")
    for file in files {
        let name = URL(fileURLWithPath: file).lastPathComponent
        guard let data = FileManager.default.contents(atPath: file),
            let image = try? ImageCoderRegistry.shared.decode(data)
        else {
            print("| \(name) | – | – | unreadable |")
            continue
        }
        let pixels = image.pixels
        let size = PixelSize(width: 256, height: max(1, Int((Double(pixels.height) * 256 / Double(pixels.width)).rounded())))
        let ours = try ImageResampler.resize(pixels, to: size, filter: .lanczos3)
        let opaque = pixels.isOpaque
        let channels = opaque ? 3 : 4
        let input = try writeRaw(pixels, to: work.appendingPathComponent("q.raw"), alpha: !opaque)
        let output = work.appendingPathComponent("q-pillow.raw").path
        let mode = opaque ? "RGB" : "RGBA"
        var cell = "**Pillow FAILED**"
        if pillowRun(pillow, "resize quality \(name)", ["lanczos", input, "\(pixels.width)", "\(pixels.height)", mode, "\(size.width)", "\(size.height)", output], number: false) != nil,
            let theirs = FileManager.default.contents(atPath: output)
        {
            let decibels = psnr(ours, theirs, channels: channels)
            cell = String(format: "%.1f", decibels)
            BenchLog.target("p4-resize-psnr", "\(name) → \(size)", measured: cell + " dB", limit: "≥ 35 dB", met: decibels >= 35)
        }
        print("| \(name) | \(pixels.width)×\(pixels.height) | \(size) | \(cell) |")
    }
}
if !failures.isEmpty {
    print("\n**Failed in this run (Pillow is installed but did not run):**\n")
    for failure in failures { print("- \(failure)") }
    FileHandle.standardError.write(Data("magpie-proc-bench: \(failures.count) Pillow run(s) FAILED (listed in the output); exit status 1\n".utf8))
    exit(1)
}
