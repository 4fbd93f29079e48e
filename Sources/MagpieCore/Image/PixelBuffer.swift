/// One colour in 8-bit RGBA with straight (not premultiplied) alpha.
public struct RGBAColor: Sendable, Hashable, CustomStringConvertible {
    /// The red channel: 0 (none) ... 255 (full), not premultiplied.
    public var red: UInt8
    /// The green channel: 0 (none) ... 255 (full), not premultiplied.
    public var green: UInt8
    /// The blue channel: 0 (none) ... 255 (full), not premultiplied.
    public var blue: UInt8
    /// Opacity, 0 (transparent) ... 255 (opaque); the colour channels are not multiplied by it.
    public var alpha: UInt8

    /// Creates a colour from its four channels.
    ///
    /// - Parameters:
    ///   - red: Red, 0...255.
    ///   - green: Green, 0...255.
    ///   - blue: Blue, 0...255.
    ///   - alpha: Opacity, 0...255; defaults to 255 (opaque).
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Opaque white.
    public static let white = RGBAColor(red: 255, green: 255, blue: 255)
    /// Opaque black.
    public static let black = RGBAColor(red: 0, green: 0, blue: 0)
    /// Fully transparent black.
    public static let clear = RGBAColor(red: 0, green: 0, blue: 0, alpha: 0)

    /// `#rrggbbaa` in lowercase hex, for example `#ff000080` for half-transparent red.
    public var description: String {
        "#" + lowercaseHex([red, green, blue, alpha])
    }
}

/// A width x height grid of 8-bit RGBA pixels, rows top to bottom, no padding.
///
/// Alpha is **straight** (not premultiplied): that is what every codec reads and
/// writes, so decoding and encoding never lose colour precision in translucent
/// areas. Resampling converts to premultiplied floats internally, which is what
/// keeps dark halos away from transparent edges.
///
/// The storage is shared copy-on-write: copying a buffer is O(1), and the first
/// mutation of a shared buffer copies the pixels.
public struct PixelBuffer: Sendable {
    /// Width in pixels (at least 1).
    public let width: Int
    /// Height in pixels (at least 1).
    public let height: Int
    var storage: PixelStorage

    /// Width and height.
    public var pixelSize: PixelSize { PixelSize(width: width, height: height) }
    /// Bytes in one row: `width * 4`.
    public var bytesPerRow: Int { width * 4 }
    /// Bytes held by the pixels: `width * height * 4`.
    public var byteCount: Int { width * height * 4 }

    /// A buffer filled with `color` (transparent by default).
    ///
    /// - Parameters:
    ///   - width: Width in pixels; must be positive.
    ///   - height: Height in pixels; must be positive.
    ///   - color: The colour of every pixel; defaults to ``RGBAColor/clear``.
    /// - Throws: ``MagpieError/imageCreationFailed(reason:)`` for a non-positive or overflowing size
    ///   (``MagpieError/ImageCreationFailureReason/invalidSize(width:height:)``) or when memory is exhausted
    ///   (``MagpieError/ImageCreationFailureReason/outOfMemory(bytes:)``).
    public init(width: Int, height: Int, fill color: RGBAColor = .clear) throws {
        let count = try Self.byteCount(width: width, height: height)
        let isZero = color == .clear
        guard let storage = PixelStorage(count: count, zeroed: isZero) else {
            throw MagpieError.imageCreationFailed(reason: .outOfMemory(bytes: count))
        }
        self.init(width: width, height: height, storage: storage)
        if !isZero { fill(with: color) }
    }

    /// A buffer holding a copy of `rgba`: `width * height * 4` bytes, straight alpha, rows top to bottom.
    ///
    /// - Parameters:
    ///   - width: Width in pixels; must be positive.
    ///   - height: Height in pixels; must be positive.
    ///   - rgba: The pixel bytes, R G B A per pixel; copied.
    /// - Throws: ``MagpieError/imageCreationFailed(reason:)``: `invalidSize` for a non-positive size,
    ///   `byteCountMismatch` when `rgba.count` is not `width * height * 4`, `outOfMemory` when allocation fails.
    public init<Bytes: Collection>(width: Int, height: Int, rgba: Bytes) throws where Bytes.Element == UInt8 {
        let count = try Self.byteCount(width: width, height: height)
        guard rgba.count == count else {
            throw MagpieError.imageCreationFailed(
                reason: .byteCountMismatch(expected: count, actual: rgba.count))
        }
        guard let storage = PixelStorage(count: count, zeroed: false) else {
            throw MagpieError.imageCreationFailed(reason: .outOfMemory(bytes: count))
        }
        let destination = UnsafeMutableBufferPointer(start: storage.bytes, count: count)
        _ = destination.initialize(from: rgba)
        self.init(width: width, height: height, storage: storage)
    }

    init(width: Int, height: Int, storage: PixelStorage) {
        precondition(storage.count >= width * height * 4, "pixel storage too small")
        self.width = width
        self.height = height
        self.storage = storage
    }

    /// An uninitialised buffer for internal producers that overwrite every byte.
    static func uninitialized(width: Int, height: Int) throws -> PixelBuffer {
        let count = try byteCount(width: width, height: height)
        guard let storage = PixelStorage(count: count, zeroed: false) else {
            throw MagpieError.imageCreationFailed(reason: .outOfMemory(bytes: count))
        }
        return PixelBuffer(width: width, height: height, storage: storage)
    }

    static func byteCount(width: Int, height: Int) throws -> Int {
        guard width > 0, height > 0 else {
            throw MagpieError.imageCreationFailed(reason: .invalidSize(width: width, height: height))
        }
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (bytes, o2) = pixels.multipliedReportingOverflow(by: 4)
        guard !o1, !o2 else {
            throw MagpieError.imageCreationFailed(reason: .invalidSize(width: width, height: height))
        }
        return bytes
    }

    /// Calls `body` with the pixel bytes (``byteCount`` of them, RGBA rows top to bottom).
    ///
    /// - Parameter body: Reads the bytes; the pointer must not escape the call.
    /// - Returns: What `body` returns.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage.bytes, count: byteCount))
    }

    /// Calls `body` with writable pixel bytes, copying the storage first when another buffer shares it.
    ///
    /// - Parameter body: Reads and writes the bytes; the pointer must not escape the call.
    /// - Returns: What `body` returns.
    public mutating func withUnsafeMutableBytes<R>(
        _ body: (UnsafeMutableRawBufferPointer) throws -> R
    ) rethrows -> R {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return try body(UnsafeMutableRawBufferPointer(start: storage.bytes, count: byteCount))
    }

    /// A copy of the pixels as `[UInt8]` (RGBA, straight alpha).
    public var rgbaBytes: [UInt8] {
        Array(UnsafeBufferPointer(start: storage.bytes, count: byteCount))
    }

    /// The pixel at column `x`, row `y` (both zero-based, from the top-left corner).
    ///
    /// Out-of-bounds coordinates stop the program (precondition). Setting a pixel copies shared storage first.
    public subscript(x: Int, y: Int) -> RGBAColor {
        get {
            precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) out of bounds")
            let p = storage.bytes + (y * width + x) * 4
            return RGBAColor(red: p[0], green: p[1], blue: p[2], alpha: p[3])
        }
        set {
            precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) out of bounds")
            let offset = (y * width + x) * 4
            withUnsafeMutableBytes { raw in
                let p = raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset
                p[0] = newValue.red
                p[1] = newValue.green
                p[2] = newValue.blue
                p[3] = newValue.alpha
            }
        }
    }

    /// True when every pixel has alpha 255.
    public var isOpaque: Bool {
        // Four pixels per step, as two 64-bit words whose alpha bytes (3 and 7 of each) must all be 255: the server
        // asks this of every result before picking its format, and the encoders and the resampler ask again.
        let raw = UnsafeRawPointer(storage.bytes)
        let alpha: UInt64 = 0xFF00_0000_FF00_0000
        let pixels = width * height
        var index = 0
        while index &+ 4 <= pixels {
            let first = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index &* 4, as: UInt64.self))
            let second = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index &* 4 &+ 8, as: UInt64.self))
            if first & second & alpha != alpha { return false }
            index &+= 4
        }
        while index < pixels {
            if storage.bytes[index &* 4 &+ 3] != 255 { return false }
            index &+= 1
        }
        return true
    }

    /// Sets every pixel to `color` (copying shared storage first).
    ///
    /// - Parameter color: The new colour of every pixel.
    public mutating func fill(with color: RGBAColor) {
        let pattern = UInt32(color.red) | UInt32(color.green) << 8 | UInt32(color.blue) << 16
            | UInt32(color.alpha) << 24
        let count = width * height
        withUnsafeMutableBytes { raw in
            // `count` is captured above: reading self.width here would overlap the mutation.
            raw.baseAddress!.bindMemory(to: UInt32.self, capacity: count)
                .update(repeating: UInt32(littleEndian: pattern), count: count)
        }
    }
}

extension PixelBuffer: Equatable {
    /// Two buffers are equal when they have the same size and the same bytes.
    public static func == (lhs: PixelBuffer, rhs: PixelBuffer) -> Bool {
        guard lhs.width == rhs.width, lhs.height == rhs.height else { return false }
        if lhs.storage === rhs.storage { return true }
        return lhs.storage.hasSameBytes(as: rhs.storage, count: lhs.byteCount)
    }
}
