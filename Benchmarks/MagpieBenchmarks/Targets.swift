// The chart's decode and thumbnail bars and the part 1 target verdicts. Which file a target
// applies to is decided from the file itself (format, progressive or not, megapixels), so the
// same rules hold for files given on the command line.
import Foundation
import Magpie
import MagpieBenchSupport

/// 25 MB as the issue states it, in KiB (MB = 10⁶ bytes).
let thumbRSSLimitKiB = 25_000_000.0 / 1024

/// Appends every peer ratio as a chart bar, and each file's part 1 verdicts.
func logRatiosAndTargets(_ results: [FileResult]) {
    for result in results {
        for (section, cells) in [("decode", result.decode), ("thumbnail", result.thumb)] {
            for (peer, measurement) in [("Pillow", cells.pillow), ("djpeg", cells.djpeg), ("vips", cells.vips)] {
                if let r = ratio(cells.magpie, measurement) { BenchLog.ratio(section, "\(result.name) vs \(peer)", r) }
            }
        }
        logTargets(result)
    }
}

private func logTargets(_ result: FileResult) {
    let subject = "\(result.name) (\(String(format: "%.1f", result.megapixels)) MP \(result.kind))"
    if result.format == .jpeg, !result.isProgressive, (12.5...15.5).contains(result.megapixels) {
        if let r = ratio(result.thumb.magpie, result.thumb.pillow) {
            BenchLog.target("p1-jpeg-thumb", subject, measured: times(r) + " Pillow", limit: "≤ 0.80×", met: r <= 0.8)
        }
        if let m = result.thumb.magpie {
            let kib = Double(m.peakRSSKiB)
            BenchLog.target(
                "p1-jpeg-thumb-rss", subject, measured: String(format: "%.1f MB (%.1f MiB)", kib * 1024 / 1e6, kib / 1024),
                limit: "≤ 25 MB", met: kib <= thumbRSSLimitKiB)
        }
    }
    if result.format == .jpeg, result.isProgressive, (16.5...19.5).contains(result.megapixels), let r = ratio(result.decode.magpie, result.decode.djpeg) {
        BenchLog.target("p1-progressive-decode", subject, measured: times(r) + " djpeg", limit: "≤ 1.05×", met: r <= 1.05)
    }
    if result.format == .png, (14...16).contains(result.megapixels), let r = ratio(result.decode.magpie, result.decode.pillow) {
        BenchLog.target("p1-png-decode", subject, measured: times(r) + " Pillow", limit: "≤ 1.00×", met: r <= 1.0)
    }
}

/// A ratio as "0.92×".
func times(_ value: Double) -> String { String(format: "%.2f×", value) }
