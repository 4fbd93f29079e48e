import Foundation
import Testing

/// `scripts/thumbor-compare`: real thumbor (PyPI, in the venv `scripts/bench-serve` makes, .build-bench/thumbor-venv,
/// with libthumbor and OpenCV for its face detector) and the built `magpie serve`, on the same sources, asked the same
/// URLs built by libthumbor. Every non-smart URL must get thumbor's status, format and size; every smart crop of a
/// photo with a face must overlap thumbor's window by at least 0.7 IoU and keep the face thumbor's detector finds.
/// Skipped when the venv or thumbor is not there (`scripts/bench-serve` installs it).
@Suite(
    "magpie serve against real thumbor, URL by URL", .serialized,
    .enabled(if: ThumborComparison.available, "no thumbor venv at .build-bench/thumbor-venv (scripts/bench-serve makes it)"))
struct ThumborComparisonTests {
    @Test(.timeLimit(.minutes(10)))
    func everyNonSmartURLGetsThumborsStatusFormatAndSize() throws {
        let report = try ThumborComparison.report.get()
        let rows = report.rows.filter { $0.kind != "smart" }
        #expect(rows.count >= 80, "the script asked only \(rows.count) non-smart URLs")
        let differing = rows.filter { !$0.ok }
        #expect(differing.isEmpty, "\(differing.count) of \(rows.count) URLs differ from thumbor:\n\(ThumborComparison.lines(differing))")
    }

    @Test(.timeLimit(.minutes(10)))
    func smartCropsOfFacesOverlapThumborsAndKeepTheFace() throws {
        let report = try ThumborComparison.report.get()
        let judged = report.rows.filter { $0.kind == "smart" && !$0.notes.contains("not judged (no face)") }
        #expect(judged.count >= 12, "only \(judged.count) smart crops of photos with a face (is the scikit-image wheel reachable?)")
        let failing = judged.filter { !$0.ok }
        #expect(failing.isEmpty, "\(failing.count) of \(judged.count) smart crops differ:\n\(ThumborComparison.lines(failing))")
    }
}

/// One run of `scripts/thumbor-compare --json` against the built debug `magpie`, shared by the suite's tests.
enum ThumborComparison {
    struct Report: Decodable {
        let rows: [Row]
    }

    struct Row: Decodable {
        let kind: String
        let url: String
        let ok: Bool
        let differences: [String]
        let notes: [String]
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let venv = root.appendingPathComponent(".build-bench/thumbor-venv")

    /// Whether the venv has thumbor (its `thumbor` command and a Python that imports it with libthumbor).
    static let available: Bool = {
        let python = venv.appendingPathComponent("bin/python")
        guard FileManager.default.isExecutableFile(atPath: venv.appendingPathComponent("bin/thumbor").path),
              FileManager.default.isExecutableFile(atPath: python.path) else { return false }
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", "import thumbor, libthumbor"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// The script's rows; its exit status 1 (some URL differs) is a report, any other failure an error.
    static let report: Result<Report, any Error> = Result {
        let magpie = try BuiltProducts.executable("magpie")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("thumbor-compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appendingPathComponent("rows.json"), log = folder.appendingPathComponent("stderr.txt")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("scripts/thumbor-compare").path,
                             "--magpie", magpie.path, "--venv", venv.path, "--json", json.path]
        process.currentDirectoryURL = root
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice  // the table; the rows come from --json
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        process.waitUntilExit()
        let errors = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        guard [0, 1].contains(process.terminationStatus), let data = FileManager.default.contents(atPath: json.path) else {
            throw CocoaError(.executableLoad, userInfo: [
                NSLocalizedDescriptionKey: "scripts/thumbor-compare exited with \(process.terminationStatus): \(errors.suffix(4000))",
            ])
        }
        return try JSONDecoder().decode(Report.self, from: data)
    }

    static func lines(_ rows: [Row]) -> String {
        rows.map { "  \($0.url): \(($0.differences + $0.notes).joined(separator: "; "))" }.joined(separator: "\n")
    }
}
