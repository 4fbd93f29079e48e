import Foundation
import Testing

/// `AllocatorPolicy` fixes glibc's mmap threshold, so large blocks keep their own mappings after a larger one was
/// freed, and gives free pages inside the heap back. Checked in a fresh process (`magpie-allocator-check`): in this one, whatever other tests freed can serve
/// large blocks from the heap whatever the threshold.
@Suite("AllocatorPolicy")
struct AllocatorPolicyTests {
    @Test func largeBlocksStayInTheirOwnMappingsAfterALargerBlockWasFreed() async throws {
        let with = try await ProcessRun.builtOffThePool("magpie-allocator-check", [])
        #expect(with.status == 0, "\(with.stderr)")
        guard with.stdout.contains("applied=true") else {
            // A sanitizer's allocator, or MALLOC_MMAP_THRESHOLD_ set for the tests: nothing to check.
            return
        }
        #expect(with.stdout.contains("mapped=8/8"), "\(with.stdout)")
        // The check tells the two apart: glibc's default puts them in the heap.
        let without = try await ProcessRun.builtOffThePool("magpie-allocator-check", ["--without-policy"])
        #expect(without.stdout.contains("mapped=0/8"), "\(without.stdout)")
    }

    @Test func releasingFreeMemoryReturnsFreedSmallBlocksThatGlibcKeeps() async throws {
        let with = try await ProcessRun.builtOffThePool("magpie-allocator-check", ["--free-pages"])
        #expect(with.status == 0, "\(with.stderr)")
        guard with.stdout.contains("released=true") else {
            // A sanitizer's allocator: nothing to check.
            return
        }
        #expect(returnedMiB(with.stdout) >= 48, "\(with.stdout)")
        // Without the call glibc keeps those pages: the check tells the two apart.
        let without = try await ProcessRun.builtOffThePool("magpie-allocator-check", ["--free-pages", "--without-release"])
        #expect(returnedMiB(without.stdout) < 8, "\(without.stdout)")
    }

    private func returnedMiB(_ output: String) -> Int {
        output.split(separator: " ").first { $0.hasPrefix("returnedMiB=") }
            .flatMap { Int($0.dropFirst("returnedMiB=".count).trimmingCharacters(in: .whitespacesAndNewlines)) } ?? -1
    }
}
