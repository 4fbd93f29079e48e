import Foundation
import MagpieAllocatorPolicy
import Testing

/// The `magpie` executable allocates with jemalloc and the settings `Sources/CMagpieAllocator/allocator.c` gives it.
@Suite("magpie's allocator")
struct MagpieAllocatorTests {
    /// `magpie` run to the end with `environment` added; its status and standard error.
    private func run(_ arguments: [String], environment: [String: String]) async throws -> (status: Int32, stderr: String) {
        let executable = try BuiltProducts.executable("magpie")
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let process = Process()
                    process.executableURL = executable
                    process.arguments = arguments
                    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
                    let errors = Pipe()
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = errors
                    try process.run()
                    let stderr = errors.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    return (process.terminationStatus, String(decoding: stderr, as: UTF8.self))
                })
            }
        }
    }

    @Test(.enabled(if: AllocatorPolicy.activeAllocator != .sanitizer, "a sanitizer's allocator answers malloc in its builds"))
    func theExecutableRunsOnJemallocWithItsOwnSettings() async throws {
        // jemalloc names each source of options it read when asked to confirm them.
        let run = try await run(["--help"], environment: ["MALLOC_CONF": "confirm_conf:true"])
        #expect(run.status == 0)
        let line = run.stderr.split(separator: "\n").first { $0.contains("global variable malloc_conf") }
        #expect(line?.contains("\"background_thread:true,dirty_decay_ms:2000,muzzy_decay_ms:0,narenas:2\"") == true, "\(run.stderr)")
    }
}
