import CImageCodecs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Heap block holding RGBA8 pixels, allocated with `malloc` so that the C codecs
/// can hand their output over without a copy. Immutable once shared: `PixelBuffer`
/// copies it before writing whenever another buffer still refers to it.
final class PixelStorage: @unchecked Sendable {
    // @unchecked: the pointer is only written through a uniquely referenced
    // PixelBuffer (copy-on-write), so concurrent readers never see a write.
    let bytes: UnsafeMutablePointer<UInt8>
    let count: Int

    /// Takes ownership of `pointer`, which must come from `malloc`.
    init(adopting pointer: UnsafeMutablePointer<UInt8>, count: Int) {
        self.bytes = pointer
        self.count = count
    }

    /// Allocates `count` bytes, zero-filled when `zeroed`; nil when memory is exhausted.
    init?(count: Int, zeroed: Bool) {
        guard let raw = mg_alloc_pixels(max(count, 1)) else { return nil }
        if zeroed { memset(raw, 0, count) }
        self.bytes = raw.assumingMemoryBound(to: UInt8.self)
        self.count = count
    }

    func copy() -> PixelStorage {
        guard let copy = PixelStorage(count: count, zeroed: false) else {
            fatalError("Magpie: out of memory copying \(count) bytes of pixels")
        }
        copy.bytes.update(from: bytes, count: count)
        return copy
    }

    deinit { free(bytes) }

    /// Whether the first `count` bytes of both blocks are equal (`memcmp`: the C calls live here).
    func hasSameBytes(as other: PixelStorage, count: Int) -> Bool {
        memcmp(bytes, other.bytes, count) == 0
    }
}
