import ArgumentParser
import Foundation
import Magpie

/// `magpie info FILE...`: format, size, frames and loop count of each file (from the header alone for an
/// image over the decode limit).
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Show format, size, frames and loop count of image files.")

    @Argument(help: "Image files to inspect.")
    var files: [String]

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("max-pixels"), help: ArgumentHelp(
        "Decode limit: most pixels (width × height) of a frame. A larger image is described from its header only, "
            + "and counts as a failure.", valueName: "n"))
    var maxPixels = ImageDecodingLimits.default.maxPixelsPerFrame

    @Flag(help: """
        One JSON object per line: path, format, width, height, frames, loopCount, bytes, bitDepth, hasAlpha, \
        colorProfile (name or null), metadata (e.g. ["exif","gps","icc","xmp"]), entries (containers only) \
        (or path, error; for an image over --max-pixels: path, format, width, height, frames when known, bytes, error).
        """)
    var json = false

    func validate() throws {
        guard maxPixels > 0 else { throw ValidationError("--max-pixels must be more than 0") }
    }

    func run() throws {
        var failures = 0
        for path in files {
            do {
                let data = try readFile(path)
                // The header first: an image over the limit is still described, and never decoded.
                if let header = try? ImageCoderRegistry.shared.header(of: data), header.pixelCount > maxPixels {
                    failures += 1
                    reportOverLimit(header, path: path, bytes: data.count)
                    continue
                }
                let options = ImageDecodingOptions(limits: ImageDecodingLimits(maxPixelsPerFrame: maxPixels))
                let image = try ImageCoderRegistry.shared.decode(data, options: options)
                let bitDepth = image.sourceInfo?.bitDepth ?? 8
                let hasAlpha = image.sourceInfo?.hasAlpha ?? !image.pixels.isOpaque
                let metadata = image.metadataKinds.map(\.rawValue)
                let entries = image.sourceInfo?.entries ?? []
                var record: [String: Any?] = [
                    "path": path, "format": image.format.rawValue, "width": image.width, "height": image.height,
                    "frames": image.frames.count, "loopCount": image.loopCount, "bytes": data.count,
                    "bitDepth": bitDepth, "hasAlpha": hasAlpha, "colorProfile": image.colorProfile?.name,
                    "metadata": metadata,
                ]
                if !entries.isEmpty {
                    record["entries"] = entries.map { entry -> [String: Any] in
                        var item: [String: Any] = ["width": entry.width, "height": entry.height, "bitDepth": entry.bitDepth]
                        if let encoding = entry.encoding { item["encoding"] = encoding }
                        return item
                    }
                }
                if json {
                    print(jsonLine(record))
                } else {
                    let loop = image.isAnimated ? ", loop \(image.loopCount.map(String.init) ?? "none")" : ""
                    var facts = ["\(bitDepth)-bit", hasAlpha ? "alpha" : "no alpha"]
                    if let profile = image.colorProfile { facts.append("colour \(profile.name)") }
                    if !metadata.isEmpty { facts.append("metadata " + metadata.joined(separator: ",")) }
                    if !entries.isEmpty {
                        facts.append("entries " + entries.map { "\($0.width)x\($0.height)/\($0.bitDepth)" }.joined(separator: " "))
                    }
                    print("\(path): \(image.format) \(image.width)x\(image.height), \(image.frames.count) frame(s)\(loop), \(data.count) bytes; \(facts.joined(separator: ", "))")
                }
            } catch {
                failures += 1
                if json {
                    print(jsonLine(["path": path, "error": "\(error)"]))
                } else {
                    printError("\(path): \(error)")
                }
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }

    /// One line (or JSON object) with what the header of an image over `--max-pixels` says, and that it was
    /// not decoded.
    private func reportOverLimit(_ header: ImageHeader, path: String, bytes: Int) {
        let error = "exceeds the decode limit: \(header.pixelCount) pixels, more than --max-pixels \(maxPixels); not decoded"
        if json {
            var record: [String: Any?] = [
                "path": path, "format": header.format.rawValue, "width": header.width, "height": header.height,
                "bytes": bytes, "error": error,
            ]
            if let frames = header.frameCount { record["frames"] = frames }
            print(jsonLine(record))
        } else {
            let frames = header.frameCount.map { ", \($0) frame(s)" } ?? ""
            printError("\(path): \(header.format) \(header.width)x\(header.height)\(frames), \(bytes) bytes: \(error)")
        }
    }
}

/// Reads a whole file, turning Foundation's error into one clear line.
func readFile(_ path: String) throws -> Data {
    do {
        return try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
        throw CLIError("cannot read \(path): \(fileErrorReason(error, path: path))")
    }
}

/// Why a file operation on `path` failed, in a few words ("is a directory", "No such file or
/// directory", "Permission denied"), without Foundation's "The operation could not be completed." framing.
func fileErrorReason(_ error: any Error, path: String) -> String {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
        return "is a directory"
    }
    let nsError = error as NSError
    if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? any Error {
        let posix = underlying as NSError
        if posix.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(posix.code))) }
    }
    if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
    return nsError.localizedDescription.replacingOccurrences(of: "The operation could not be completed. ", with: "")
}

/// A CLI-level failure with a one-line message.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
