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

    /// Rows whose file exists: REFERENCE.tsv, with REFERENCE-FORMATS.tsv's rows replacing those of the same path and
    /// adding the wave-2 formats; optionally only one format (env MAGPIE_CONFORMANCE_FORMAT, e.g. "GIF").
    static let rows: [Row] = {
        guard let directory else { return [] }
        let only = ProcessInfo.processInfo.environment["MAGPIE_CONFORMANCE_FORMAT"]
        var byPath: [String: Row] = [:]
        var order: [String] = []
        for file in ["REFERENCE.tsv", "REFERENCE-FORMATS.tsv"] {
            for f in table(file) {
                let row = Row(
                    path: f["path"] ?? "", format: f["format"] ?? "", expect: f["expect"] ?? "",
                    width: Int(f["display_width"] ?? ""), height: Int(f["display_height"] ?? ""),
                    frames: Int(f["frames"] ?? ""), loopCount: f["loop_count"] ?? "", delays: f["delays_ms"] ?? "",
                    lossless: f["lossless"] == "yes", sha256: f["rgba_sha256"] ?? "", grid8: f["grid8"] ?? "",
                    notes: f["notes"] ?? "")
                if byPath[row.path] == nil { order.append(row.path) }
                byPath[row.path] = row
            }
        }
        return order.compactMap { byPath[$0] }.filter { row in
            (only == nil || row.format.caseInsensitiveCompare(only!) == .orderedSame)
                && FileManager.default.fileExists(atPath: row.url.path)
        }
    }()

    /// One row of COLOUR.tsv: a file that carries colour information and its first frame's 8×8 grid in sRGB.
    struct ColourRow: Sendable, CustomTestStringConvertible {
        var path: String, source: String, description: String, srgbGrid8: String, notes: String
        var testDescription: String { path }
        var url: URL { Corpus.directory!.appendingPathComponent(path) }
    }

    /// COLOUR.tsv rows with a grid whose file exists and whose reference row expects a decode (format filter applies).
    static let colourRows: [ColourRow] = {
        let decodable = Dictionary(rows.map { ($0.path, $0) }, uniquingKeysWith: { $1 })
        return table("COLOUR.tsv").compactMap { f -> ColourRow? in
            let row = ColourRow(
                path: f["path"] ?? "", source: f["colour_source"] ?? "", description: f["profile_description"] ?? "",
                srgbGrid8: f["srgb_grid8"] ?? "", notes: f["notes"] ?? "")
            guard !row.srgbGrid8.isEmpty, decodable[row.path]?.expect == "decode" else { return nil }
            return row
        }
    }()

    /// The rows of a corpus TSV file as column-name → value dictionaries (`#` lines skipped; first line names columns).
    static func table(_ name: String) -> [[String: String]] {
        guard let directory,
            let text = try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        else { return [] }
        var header: [String]?
        var rows: [[String: String]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard let names = header else { header = fields; continue }
            var f: [String: String] = [:]
            for (name, value) in zip(names, fields) { f[name] = value }
            rows.append(f)
        }
        return rows
    }
}
