import Foundation
import Testing

/// The shared real-image corpus (`../shared/corpus` beside the repository), when present.
enum Corpus {
    static let directory: URL? = {
        var candidates: [URL] = []
        if let env = ProcessInfo.processInfo.environment["MAGPIE_CORPUS"] { candidates.append(URL(fileURLWithPath: env)) }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(repo.deletingLastPathComponent().appendingPathComponent("shared/corpus"))
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("REFERENCE.tsv").path) }
    }()

    /// One row of REFERENCE.tsv.
    struct Row: Sendable, CustomTestStringConvertible {
        var path: String, format: String, expect: String
        var width: Int?, height: Int?, frames: Int?
        var loopCount: String, delays: String, lossless: Bool
        var sha256: String, grid8: String, notes: String
        var testDescription: String { path }
        var url: URL { Corpus.directory!.appendingPathComponent(path) }
    }

    /// Rows whose file exists, optionally only one format (env MAGPIE_CONFORMANCE_FORMAT, e.g. "GIF").
    static let rows: [Row] = {
        guard let directory else { return [] }
        guard let text = try? String(contentsOf: directory.appendingPathComponent("REFERENCE.tsv"), encoding: .utf8)
        else { return [] }
        let only = ProcessInfo.processInfo.environment["MAGPIE_CONFORMANCE_FORMAT"]
        var header: [String]?
        var rows: [Row] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard let names = header else { header = fields; continue }
            var f: [String: String] = [:]
            for (name, value) in zip(names, fields) { f[name] = value }
            let row = Row(
                path: f["path"] ?? "", format: f["format"] ?? "", expect: f["expect"] ?? "",
                width: Int(f["display_width"] ?? ""), height: Int(f["display_height"] ?? ""),
                frames: Int(f["frames"] ?? ""), loopCount: f["loop_count"] ?? "", delays: f["delays_ms"] ?? "",
                lossless: f["lossless"] == "yes", sha256: f["rgba_sha256"] ?? "", grid8: f["grid8"] ?? "",
                notes: f["notes"] ?? "")
            if let only, row.format.caseInsensitiveCompare(only) != .orderedSame { continue }
            if FileManager.default.fileExists(atPath: row.url.path) { rows.append(row) }
        }
        return rows
    }()
}
