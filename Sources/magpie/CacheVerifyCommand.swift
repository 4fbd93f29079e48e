import ArgumentParser
import Foundation
import Magpie

extension CacheCommand {
    /// `magpie cache verify`: checks every entry's file against the index, lists orphans, optionally repairs.
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every entry's size and CRC-32 against the index; list orphan and temporary files.",
            discussion: """
                Prints one summary line (N entries: N intact, N damaged, N orphans, N temporary files), then one \
                line per damaged entry or orphan file. Opening the cache first settles writes cut short by \
                processes that are gone, so what is left is what a reader would meet.

                --json prints one JSON object: path, checked, intact, damaged, orphans, temporaryFiles, repaired, \
                damagedEntries (key, file, reason) and orphanFiles.

                Exit status: 0 nothing damaged, 1 some entry damaged (also with --repair, which removes it), no \
                such cache, or the cache could not be opened.
                """)

        @OptionGroup var location: Location

        @Flag(help: "Remove damaged entries and orphan files.")
        var repair = false

        @Flag(help: "Also decode each intact entry; one that does not decode counts as damaged.")
        var decode = false

        /// With `--json`: one object with path, checked, intact, damaged, orphans, temporaryFiles, repaired,
        /// damagedEntries (key, file, reason) and orphanFiles.
        private var json: Bool { location.json }

        func run() throws {
            let report: DiskStorage.VerificationReport
            let path: String
            do {
                let storage = try location.open()
                path = storage.directoryURL.path
                let check: ((DiskStorage.EntryMetadata, Data) throws -> Void)? =
                    decode ? { _, data in _ = try ImageCoderRegistry.shared.decode(data) } : nil
                report = try storage.verify(repair: repair, checkingPayload: check)
            } catch {
                if json { print(jsonLine(["error": "\(error)"])) } else { printError("cache verify: \(error)") }
                throw ExitCode(1)
            }
            if json {
                print(jsonLine(Self.record(report, path: path)))
            } else {
                for line in Self.lines(report) { print(line) }
            }
            if !report.damaged.isEmpty { throw ExitCode(1) }
        }

        /// The `--json` object.
        static func record(_ report: DiskStorage.VerificationReport, path: String) -> [String: Any?] {
            [
                "path": path, "checked": report.checked, "intact": report.intact, "damaged": report.damaged.count,
                "orphans": report.orphans.count, "temporaryFiles": report.temporaryFiles, "repaired": report.repaired,
                "damagedEntries": report.damaged.map { ["key": $0.key, "file": $0.fileName, "reason": $0.reason.description] },
                "orphanFiles": report.orphans,
            ]
        }

        /// The human report: the summary, a line per problem, and what repair removed.
        static func lines(_ report: DiskStorage.VerificationReport) -> [String] {
            var lines = [
                "\(report.checked) entries: \(report.intact) intact, \(report.damaged.count) damaged, "
                    + "\(report.orphans.count) orphans, \(report.temporaryFiles) temporary files"
            ]
            lines += report.damaged.map { "damaged \($0.key) (\($0.fileName)): \($0.reason)" }
            lines += report.orphans.map { "orphan \($0)" }
            if report.repaired && !report.isClean {
                lines.append("repaired: removed \(report.damaged.count) damaged entries and \(report.orphans.count) orphans")
            }
            return lines
        }
    }
}
