import Dispatch
import Foundation

/// Executables built by `swift build --build-tests` next to the test bundle.
enum BuiltProducts {
    /// The executable `name` from the build products folder; throws when it was not built,
    /// so a test that needs it fails instead of being skipped.
    static func executable(_ name: String) throws -> URL {
        let bundle = Bundle.main.bundleURL
        let candidates = [bundle.appendingPathComponent(name), bundle.deletingLastPathComponent().appendingPathComponent(name)]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "\(name) was not built next to the tests"])
        }
        return found
    }
}

/// What a finished subprocess printed and how it exited.
struct ProcessRun {
    var status: Int32
    var stdout: String
    var stderr: String

    /// ``built(_:_:)`` on a Dispatch thread, so an async test does not block one of the cooperative pool's few
    /// threads while the child runs (the test origin's handlers need them).
    static func builtOffThePool(_ name: String, _ arguments: [String]) async throws -> ProcessRun {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try built(name, arguments) }) }
        }
    }

    /// Runs the built executable `name` with `arguments` (and `environment` instead of this process's, when given) to
    /// the end (blocking the calling thread).
    static func built(_ name: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessRun {
        let process = Process()
        process.executableURL = try BuiltProducts.executable(name)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessRun(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                          stderr: String(decoding: stderr, as: UTF8.self))
    }
}
