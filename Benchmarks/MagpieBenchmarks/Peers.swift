// How each column is measured: Magpie and the raw C codec in magpie-bench-worker, Pillow in a
// Python child, djpeg / vips / vipsthumbnail as a process per run through the worker's `exec`
// mode (which keeps their peak RSS free of this process's own).
import Foundation
import Magpie
import MagpieBenchSupport

/// One cell: median time and peak RSS, as the worker or the Pillow script print it.
struct Measurement: Codable {
    var medianMs: Double
    var peakRSSKiB: Int
    /// External tools: the median time of the baseline command, already subtracted.
    var baselineMs: Double?
    /// External tools: the worker's own peak RSS, which a child's ru_maxrss cannot go below.
    var floorKiB: Int?
    /// Magpie and Pillow: the median CPU time of one run (all threads, user + system).
    var medianCpuMs: Double?
}

/// A peer (or the worker) that is installed but did not run: the bench reports it and exits non-zero.
struct PeerFailure: Error, CustomStringConvertible {
    let description: String
}

/// Runs a command and returns its standard output; throws a PeerFailure naming the command, its exit
/// status and the end of its output when it cannot start or exits non-zero.
func capture(_ executable: String, _ arguments: [String]) throws -> String {
    guard let finished = runToCompletion(executable, arguments) else {
        throw PeerFailure(description: "\(executable): cannot start")
    }
    guard finished.status == 0 else {
        let how = finished.signal.map { "signal \($0)" } ?? "exit status \(finished.status)"
        let tail = (finished.output + "\n" + finished.errors).split(separator: "\n").suffix(4).joined(separator: " | ")
        let shown = ([executable] + arguments.prefix(4).map { $0.contains("\n") ? "<script>" : $0 }).joined(separator: " ")
        throw PeerFailure(description: "`\(shown)` failed (\(how)): \(tail)")
    }
    return finished.output
}

/// Runs a worker or the Pillow script and decodes the JSON line it prints; throws when it fails or prints something else.
func measureProcess(_ executable: String, _ arguments: [String]) throws -> Measurement {
    let output = try capture(executable, arguments)
    do {
        return try JSONDecoder().decode(Measurement.self, from: Data(output.utf8))
    } catch {
        let shown = output.trimmingCharacters(in: .whitespacesAndNewlines).prefix(200)
        throw PeerFailure(description: "`\(executable) \(arguments.first ?? "")...` printed no measurement: \"\(shown)\"")
    }
}

/// Pillow's side of the decode and thumbnail cells (a file beside this one, shared with scripts/bench-library).
let pillowScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pillow_codec.py").path

/// The tools of one run: the worker, and each peer's executable (nil = not installed, skipped).
/// Every method returns nil for a peer that is not installed and throws when an installed one fails.
struct Peers {
    let worker: String
    /// An absolute path to a Python that imports PIL; nil when Pillow is not installed.
    let python: String?
    let djpeg: String?
    let vips: String?
    let vipsthumbnail: String?
    /// Where vipsthumbnail writes its output.
    let scratch: URL

    func magpie(_ task: String, _ path: String, runs: Int) throws -> Measurement? {
        try measureProcess(worker, [task, path, "\(runs)"])
    }

    func pillow(_ task: String, _ path: String, runs: Int) throws -> Measurement? {
        guard let python else { return nil }
        return try measureProcess(python, [pillowScript, task, path, "\(runs)"])
    }

    /// djpeg to /dev/null, minus the cost of spawning /bin/true; `scale` is djpeg's -scale M/N.
    func djpeg(_ path: String, scale: String?, runs: Int) throws -> Measurement? {
        guard let djpeg else { return nil }
        var command = [djpeg, "-outfile", "/dev/null"]
        if let scale { command += ["-scale", scale] }
        return try exec(runs: runs, baseline: ["/bin/true"], command: command + [path])
    }

    /// A full decode by libvips (`vips avg` reads every pixel), minus libvips's start-up.
    func vipsDecode(_ path: String, runs: Int) throws -> Measurement? {
        guard let vips else { return nil }
        return try exec(runs: runs, baseline: [vips, "--vips-version"], command: [vips, "avg", path])
    }

    /// vipsthumbnail's own pipeline (shrink-on-load, fit 256×256, JPEG q80), minus its start-up.
    func vipsThumb(_ path: String, runs: Int) throws -> Measurement? {
        guard let vipsthumbnail else { return nil }
        let out = scratch.appendingPathComponent("vips-thumb.jpg").path
        return try exec(runs: runs, baseline: [vipsthumbnail, "--vips-version"], command: [vipsthumbnail, path, "-s", "256", "-o", out + "[Q=80]"])
    }

    /// Time and peak RSS of `vips --vips-version` alone: the start-up the vips cells leave out.
    func vipsStartup() throws -> Measurement? {
        guard let vips else { return nil }
        return try exec(runs: 5, baseline: ["/bin/true"], command: [vips, "--vips-version"])
    }

    private func exec(runs: Int, baseline: [String], command: [String]) throws -> Measurement? {
        try measureProcess(worker, ["exec", "\(runs)"] + baseline + ["--"] + command)
    }
}
