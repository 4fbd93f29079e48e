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
