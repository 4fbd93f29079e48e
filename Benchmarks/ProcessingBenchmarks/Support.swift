import Foundation
import Magpie
import MagpieBenchSupport

/// Median wall time in ms of `body` over `runs` runs, after two warm-up runs.
func medianMs(_ runs: Int, _ body: () throws -> Void) rethrows -> Double {
    for _ in 0..<2 { try body() }
    let clock = ContinuousClock()
    var times: [Double] = []
    for _ in 0..<runs {
        let elapsed = try clock.measure(body)
        times.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }
    times.sort()
    return times.count % 2 == 1 ? times[times.count / 2] : (times[times.count / 2 - 1] + times[times.count / 2]) / 2
}

/// Standard output of `executable arguments`, nil when it cannot start or exits non-zero.
/// Its standard error goes to ours unless `quiet`.
func run(_ executable: String, _ arguments: [String], quiet: Bool = false) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = quiet ? FileHandle.nullDevice : FileHandle.standardError
    do { try process.run() } catch { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
}

/// A Python that can import PIL, as an absolute path. `given` (a path or a name on PATH) must be one: when it is
/// missing or cannot import PIL the bench stops with exit status 2, since a Pillow asked for must not vanish from
/// the report. Without it: python3 on PATH, else the venv scripts/bench makes, else nil (Pillow not installed).
func findPillow(given: String?) -> String? {
    func importsPIL(_ path: String, quiet: Bool) -> Bool { run(path, ["-c", "import PIL"], quiet: quiet) != nil }
    guard let given else {
        return [which("python3"), which(".build-bench/venv/bin/python")].compactMap { $0 }.first { importsPIL($0, quiet: true) }
    }
    guard let path = which(given) else {
        FileHandle.standardError.write(Data("magpie-proc-bench: Pillow: --python \(given): no such executable (as a path, or on PATH)\n".utf8))
        exit(2)
    }
    guard importsPIL(path, quiet: false) else {
        FileHandle.standardError.write(Data("magpie-proc-bench: Pillow: --python \(given) (\(path)) cannot import PIL (its error is above)\n".utf8))
        exit(2)
    }
    return path
}

/// A photo-like opaque test image: smooth colour waves plus fixed pseudo-random grain, so
/// neither flat areas nor pure noise dominate.
func generatedImage(width: Int, height: Int) throws -> PixelBuffer {
    let waveX = (0..<width).map { sin(Double($0) / 37) * 70 }
    let waveY = (0..<height).map { cos(Double($0) / 23) * 50 }
    var bytes = [UInt8](repeating: 255, count: width * height * 4)
    var seed: UInt32 = 0x9E37_79B9
    for y in 0..<height {
        for x in 0..<width {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            let grain = Double(Int(seed >> 27)) - 16
            let i = (y * width + x) * 4
            bytes[i] = UInt8(clamping: Int(128 + waveX[x] + waveY[y] + grain))
            bytes[i + 1] = UInt8(clamping: Int(128 + waveX[x] - waveY[y] + grain))
            bytes[i + 2] = UInt8(clamping: Int(128 - waveX[x] + grain + Double(y * 60 / height)))
        }
    }
    return try PixelBuffer(width: width, height: height, rgba: bytes)
}

/// Writes the pixels as raw RGB (or RGBA with `alpha`) bytes; returns the path.
func writeRaw(_ pixels: PixelBuffer, to url: URL, alpha: Bool = false) throws -> String {
    var bytes = pixels.rgbaBytes
    if !alpha {
        var packed = [UInt8](repeating: 0, count: pixels.width * pixels.height * 3)
        for i in 0..<(pixels.width * pixels.height) {
            packed[i * 3] = bytes[i * 4]
            packed[i * 3 + 1] = bytes[i * 4 + 1]
            packed[i * 3 + 2] = bytes[i * 4 + 2]
        }
        bytes = packed
    }
    try Data(bytes).write(to: url)
    return url.path
}

/// PSNR in dB of `theirs` (raw, `channels` per pixel) against `ours`; infinity when identical.
func psnr(_ ours: PixelBuffer, _ theirs: Data, channels: Int) -> Double {
    let mine = ours.rgbaBytes
    let count = ours.width * ours.height
    guard theirs.count == count * channels else { return .nan }
    var squared = 0.0
    theirs.withUnsafeBytes { raw in
        let other = raw.bindMemory(to: UInt8.self)
        for i in 0..<count {
            for c in 0..<channels {
                let d = Double(mine[i * 4 + c]) - Double(other[i * channels + c])
                squared += d * d
            }
        }
    }
    let mse = squared / Double(count * channels)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}
