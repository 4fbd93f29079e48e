import Foundation

/// `name` as an absolute path: a name with a slash is taken as written (relative to the working directory),
/// a bare name is looked up on PATH as a shell would. Nil when there is no such executable.
/// (Process does not search PATH: `URL(fileURLWithPath: "python3")` is `./python3`, which is how the
/// benchmarks once reported an installed Pillow as missing.)
public func which(_ name: String) -> String? {
    guard !name.isEmpty else { return nil }
    if name.contains("/") {
        let path = URL(fileURLWithPath: name).standardizedFileURL.path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = URL(fileURLWithPath: String(dir)).appendingPathComponent(name).standardizedFileURL.path
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}
