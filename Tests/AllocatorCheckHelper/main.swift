// magpie-allocator-check: whether 1 MiB blocks get mappings of their own after an 8 MiB block was freed, in a fresh
// process (a heap no other code has used, so no freed chunk can serve them instead).
//
//   magpie-allocator-check [--without-policy]
//
// Prints `applied=BOOL mapped=N/8`. By default it applies AllocatorPolicy first, as `magpie serve` does; without it,
// glibc raises its mmap threshold to 8 MiB on that free and the 1 MiB blocks come from the heap.
//
//   magpie-allocator-check --free-pages [--without-release]
//
// Prints `released=BOOL returnedMiB=N`: how much of 64 MiB of small blocks, freed behind a block still in use (so
// glibc's own trimming of the heap's top cannot return them), went back to the kernel after
// AllocatorPolicy.releaseFreeMemory(), or without it after nothing.
#if canImport(Glibc)
import Glibc
#endif
import MagpieAllocatorPolicy

if CommandLine.arguments.contains("--free-pages") {
    checkFreePages(release: !CommandLine.arguments.contains("--without-release"))
    exit(0)
}

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

func checkFreePages(release: Bool) {
    let blockSize = 4096, count = (64 << 20) / 4096
    var blocks: [UnsafeMutableRawPointer] = []
    blocks.reserveCapacity(count)
    for _ in 0..<count {
        guard let block = malloc(blockSize) else { exit(2) }
        memset(block, 1, blockSize)
        blocks.append(block)
    }
    guard let pin = malloc(64) else { exit(2) }
    blocks.forEach { free($0) }
    let before = residentPages()
    let released = release ? AllocatorPolicy.releaseFreeMemory() : false
    let returned = ((before - residentPages()) * Int(sysconf(Int32(_SC_PAGESIZE)))) >> 20
    free(pin)
    print("released=\(released) returnedMiB=\(returned)")
}

/// The process's resident pages, from /proc/self/statm's second field.
func residentPages() -> Int {
    let file = open("/proc/self/statm", O_RDONLY)
    guard file >= 0 else { exit(2) }
    defer { close(file) }
    var bytes = [UInt8](repeating: 0, count: 128)
    let count = read(file, &bytes, bytes.count)
    let fields = String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self).split(separator: " ")
    guard fields.count > 1, let resident = Int(fields[1]) else { exit(2) }
    return resident
}
