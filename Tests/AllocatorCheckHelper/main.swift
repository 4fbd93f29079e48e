// magpie-allocator-check: whether 1 MiB blocks get mappings of their own after an 8 MiB block was freed, in a fresh
// process (a heap no other code has used, so no freed chunk can serve them instead).
//
//   magpie-allocator-check [--without-policy]
//
// Prints `applied=BOOL mapped=N/8`. By default it applies AllocatorPolicy first, as `magpie serve` does; without it,
// glibc raises its mmap threshold to 8 MiB on that free and the 1 MiB blocks come from the heap.
#if canImport(Glibc)
import Glibc
#endif
import MagpieServer

let applied = CommandLine.arguments.contains("--without-policy") ? false : AllocatorPolicy.returnLargeBlocksToTheSystem()
guard let large = malloc(8 << 20) else { exit(2) }
memset(large, 1, 8 << 20)
free(large)
var blocks: [UnsafeMutableRawPointer] = []
for _ in 0..<8 {
    guard let block = malloc(1 << 20) else { exit(2) }
    blocks.append(block)
}
// glibc keeps each chunk's size just before its memory; bit 1 of it (IS_MMAPPED) marks a chunk in its own mapping.
let mapped = blocks.filter { ($0 - MemoryLayout<Int>.size).load(as: Int.self) & 2 != 0 }.count
blocks.forEach { free($0) }
print("applied=\(applied) mapped=\(mapped)/8")
