import Foundation

/// Reads `magpie cache verify --decode --json` and lists what is wrong with the cache.
enum VerifyParser {
    /// The counts; a damaged entry, an orphan, an unexpected exit status or unreadable output each add a violation.
    static func parse(_ result: ChildResult, into violations: inout [String]) -> VerifyRecord {
        var record = VerifyRecord()
        record.exitStatus = result.exitStatus
        let text = String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
            let checked = object["checked"] as? Int
        else {
            violations.append("cache verify printed no report (exit \(result.exitStatus.map { "\($0)" } ?? "signal")): \(text.prefix(300)) \(result.stderrTail.suffix(300))")
            return record
        }
        record.checked = checked
        record.intact = object["intact"] as? Int ?? 0
        record.damaged = object["damaged"] as? Int ?? 0
        record.orphans = object["orphans"] as? Int ?? 0
        record.temporaryFiles = object["temporaryFiles"] as? Int ?? 0
        for entry in object["damagedEntries"] as? [[String: Any]] ?? [] {
            violations.append("cache: damaged entry \(entry["key"] ?? "?") (\(entry["file"] ?? "?")): \(entry["reason"] ?? "?")")
        }
        for file in object["orphanFiles"] as? [String] ?? [] { violations.append("cache: orphan file \(file)") }
        if result.exitStatus != (record.damaged > 0 ? 1 : 0) {
            violations.append("cache verify exited with \(result.exitStatus.map { "\($0)" } ?? "a signal") for \(record.damaged) damaged entries")
        }
        if checked == 0 { violations.append("cache verify found no entries: nothing was cached") }
        return record
    }
}
