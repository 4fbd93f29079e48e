import ArgumentParser
import Foundation
import Magpie

/// `magpie sample DIR`: writes a small set of images that Magpie generates itself
/// (a photo-like JPEG, a translucent PNG, animated GIF/APNG/WebP, a truncated JPEG),
/// so the tool can be tried without downloading anything.
struct SampleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample", abstract: "Write a set of generated sample images into a folder.")

    @Argument(help: "Folder to write into (created if missing).")
    var directory: String

    @OptionGroup var global: GlobalOptions

    @Flag(help: "One JSON object per file: path, format, bytes.")
    var json = false

    func run() throws {
        global.bootstrapLogging()
        let folder = URL(fileURLWithPath: directory)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            printError("sample: cannot create the folder \(directory): \(fileErrorReason(error, path: directory))")
            throw ExitCode(1)
        }
        for sample in try SampleImages.files() {
            let path = folder.appendingPathComponent(sample.name).path
            do {
                try sample.data.write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                printError("sample: cannot write \(path): \(fileErrorReason(error, path: path))")
                throw ExitCode(1)
            }
            print(json ? jsonLine(["path": path, "format": sample.data.mg.imageFormat.rawValue, "bytes": sample.data.count]) : path)
        }
    }
}
