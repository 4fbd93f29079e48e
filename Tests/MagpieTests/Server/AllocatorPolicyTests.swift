import Foundation
import MagpieServer
import Testing

/// `AllocatorPolicy` fixes glibc's mmap threshold, so large blocks keep their own mappings after a larger one was freed.
@Suite("AllocatorPolicy")
struct AllocatorPolicyTests {
    @Test func largeBlocksStayInTheirOwnMappingsAfterALargerBlockWasFreed() throws {
        guard AllocatorPolicy.returnLargeBlocksToTheSystem() else {
            // A sanitizer's allocator, or MALLOC_MMAP_THRESHOLD_ set for this process: nothing to check.
            return
        }
        // By default, freeing this 8 MiB mapping would raise glibc's threshold above the 1 MiB blocks below.
        let large = try #require(malloc(8 << 20))
        memset(large, 1, 8 << 20)
        free(large)
        var blocks: [UnsafeMutableRawPointer] = []
        defer { blocks.forEach { free($0) } }
        for _ in 0..<8 {
            blocks.append(try #require(malloc(1 << 20)))
        }
        // glibc places a mapped block's memory 16 bytes past the start of its own pages; a heap block lands there
        // about once in 256.
        let offsets = blocks.map { Int(bitPattern: $0) % 4096 }
        #expect(offsets.allSatisfy { $0 == 16 }, "\(offsets)")
    }
}
