/// Turns the pixel data a ``DIBHeader`` describes into straight RGBA rows, top to bottom: palette indices (1, 4, 8
/// bits, uncompressed or RLE), 24-bit BGR and 16/32-bit bit fields, plus an icon's AND mask.
enum DIBPixels {
    /// Decodes the pixels of `header` from `bytes`.
    ///
    /// - Parameters:
    ///   - andMask: Whether an icon's 1-bit AND mask follows the colour rows; entries below 32 bits take their alpha
    ///     from it (a set bit is transparent).
    ///   - format: The format named in errors.
    static func decode(
        _ bytes: LittleEndianBytes, header: DIBHeader, andMask: Bool, format: ImageFormat
    ) throws -> PixelBuffer {
        // Uncompressed rows are checked against the file before the canvas exists: a few header bytes declaring
        // 10000x10000 must not cost a 400 MB allocation first.
        if header.compression == .rgb || header.compression == .bitFields {
            try checkRowsPresent(bytes, header: header, format: format)
        }
        var buffer = try PixelBuffer(width: header.width, height: header.height)
        try buffer.withUnsafeMutableBytes { raw in
            let out = raw.bindMemory(to: UInt32.self)
            switch header.compression {
            case .rle8, .rle4:
                try decodeRLE(bytes, header: header, into: out, format: format)
            case .rgb, .bitFields:
                try decodeRows(bytes, header: header, into: out, format: format)
            }
            if andMask {
                try applyAndMask(bytes, header: header, to: out, format: format)
            }
        }
        return buffer
    }

    /// The row of the output image that stored row `row` (in file order) becomes.
    private static func outputRow(_ row: Int, _ header: DIBHeader) -> Int {
        header.topDown ? row : header.height - 1 - row
    }

    private static func rgba(_ value: UInt32) -> UInt32 { UInt32(littleEndian: value) }

    /// Throws `truncatedData` unless every uncompressed row is in `bytes` (the last row's padding may be missing).
    private static func checkRowsPresent(_ bytes: LittleEndianBytes, header: DIBHeader, format: ImageFormat) throws {
        let rowBytes = (header.width * header.bitCount + 7) / 8
        guard header.pixelOffset + header.stride * (header.height - 1) + rowBytes <= bytes.count else {
            throw MagpieError.decodingFailed(
                reason: .truncatedData(format, message: "the file ends before the \(header.height) rows of pixels it declares"))
        }
    }

    private static func decodeRows(
        _ bytes: LittleEndianBytes, header: DIBHeader, into out: UnsafeMutableBufferPointer<UInt32>, format: ImageFormat
    ) throws {
        let width = header.width, stride = header.stride
        try checkRowsPresent(bytes, header: header, format: format)
        let palette = paletteTable(header)
        let channels = BitFieldChannels(header.masks)
        let base = bytes.bytes
        for row in 0..<header.height {
            let src = header.pixelOffset + row * stride
            let dst = outputRow(row, header) * width
            switch header.bitCount {
            case 1, 4, 8:
                let bits = header.bitCount, perByte = 8 / bits, valueMask = (1 << bits) - 1
                for x in 0..<width {
                    let byte = Int(base[src + x / perByte])
                    let index = byte >> (8 - bits - (x % perByte) * bits) & valueMask
                    out[dst + x] = palette[index]
                }
            case 24:
                for x in 0..<width {
                    let at = src + x * 3
                    let value = UInt32(base[at + 2]) | UInt32(base[at + 1]) << 8 | UInt32(base[at]) << 16 | 0xFF00_0000
                    out[dst + x] = rgba(value)
                }
            case 16:
                for x in 0..<width {
                    let at = src + x * 2
                    out[dst + x] = rgba(channels.rgba(UInt32(base[at]) | UInt32(base[at + 1]) << 8))
                }
            default:
                for x in 0..<width {
                    let at = src + x * 4
                    let value = UInt32(base[at]) | UInt32(base[at + 1]) << 8 | UInt32(base[at + 2]) << 16 | UInt32(base[at + 3]) << 24
                    out[dst + x] = rgba(channels.rgba(value))
                }
            }
        }
    }

    /// 256 entries (indices past the palette are opaque black), as RGBA words in memory order.
    private static func paletteTable(_ header: DIBHeader) -> [UInt32] {
        var table = [UInt32](repeating: rgba(0xFF00_0000), count: 256)
        for (index, entry) in header.palette.prefix(256).enumerated() { table[index] = rgba(entry) }
        return table
    }

    /// RLE8/RLE4: runs, literal runs, end of line, delta and end of bitmap. Pixels no code writes keep palette
    /// entry 0 (what the reference decoders show). Runs longer than the row are clipped; anything drawn or moved below
    /// the last row is corrupt, and data that ends before the end-of-bitmap code and the last row is truncated.
    private static func decodeRLE(
        _ bytes: LittleEndianBytes, header: DIBHeader, into out: UnsafeMutableBufferPointer<UInt32>, format: ImageFormat
    ) throws {
        let palette = paletteTable(header)
        let width = header.width, height = header.height, isRLE8 = header.compression == .rle8
        for index in 0..<out.count { out[index] = palette[0] }
        func corrupt(_ message: String) -> MagpieError { .decodingFailed(reason: .corruptData(format, message: message)) }
        func put(_ x: Int, _ y: Int, _ index: Int) {
            if x < width { out[outputRow(y, header) * width + x] = palette[index] }
        }
        var x = 0, y = 0, at = header.pixelOffset
        while true {
            guard let count = bytes.u8(at), let code = bytes.u8(at + 1) else {
                if y >= height { return }
                throw MagpieError.decodingFailed(reason: .truncatedData(format, message: "RLE data ends at row \(y) of \(height)"))
            }
            at += 2
            if count > 0 {
                guard y < height else { throw corrupt("RLE data runs past the last row") }
                for k in 0..<count where x + k < width {
                    put(x + k, y, isRLE8 ? code : (k % 2 == 0 ? code >> 4 : code & 0x0F))
                }
                x += count
                continue
            }
            switch code {
            case 0:
                guard y < height else { throw corrupt("RLE end of line past the last row") }
                x = 0
                y += 1
            case 1:
                return
            case 2:
                guard let dx = bytes.u8(at), let dy = bytes.u8(at + 1) else {
                    throw MagpieError.decodingFailed(reason: .truncatedData(format, message: "RLE delta cut short"))
                }
                at += 2
                x += dx
                y += dy
                guard y < height else { throw corrupt("RLE delta moves past the last row") }
            default:
                let length = isRLE8 ? code : (code + 1) / 2
                let padded = (length + 1) & ~1
                guard at + padded <= bytes.count else {
                    throw MagpieError.decodingFailed(reason: .truncatedData(format, message: "RLE literal run cut short"))
                }
                guard y < height else { throw corrupt("RLE data runs past the last row") }
                for k in 0..<code where x + k < width {
                    let byte = bytes.bytes[at + (isRLE8 ? k : k / 2)]
                    put(x + k, y, isRLE8 ? Int(byte) : (k % 2 == 0 ? Int(byte) >> 4 : Int(byte) & 0x0F))
                }
                x += code
                at += padded
            }
        }
    }

    /// An icon's AND mask: 1 bit per pixel, rows padded to 4 bytes, in the colour rows' order. Entries below 32 bits
    /// take all their alpha from it; 32-bit entries keep their own alpha.
    private static func applyAndMask(
        _ bytes: LittleEndianBytes, header: DIBHeader, to out: UnsafeMutableBufferPointer<UInt32>, format: ImageFormat
    ) throws {
        guard header.bitCount < 32 else { return }
        let width = header.width, maskStride = (width + 31) / 32 * 4
        let start = header.pixelOffset + header.stride * header.height
        guard start + maskStride * header.height <= bytes.count else {
            throw MagpieError.decodingFailed(reason: .truncatedData(format, message: "the file ends inside the icon's AND mask"))
        }
        for row in 0..<header.height {
            let src = start + row * maskStride, dst = outputRow(row, header) * width
            for x in 0..<width where bytes.bytes[src + x / 8] & (0x80 >> UInt8(x % 8)) != 0 {
                out[dst + x] = 0
            }
        }
    }
}

/// Unpacks 16- and 32-bit pixels through their bit-field masks: an n-bit channel becomes `round(v*255/(2^n-1))`.
struct BitFieldChannels {
    private struct Channel {
        let mask: UInt32, shift: UInt32, max: UInt64

        init(_ mask: UInt32) {
            self.mask = mask
            shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
            max = mask == 0 ? 0 : UInt64(mask >> shift)
        }

        func value(_ pixel: UInt32, absent: UInt32) -> UInt32 {
            guard max > 0 else { return absent }
            let v = UInt64((pixel & mask) >> shift)
            return UInt32((v * 510 + max) / (2 * max))
        }
    }

    private let red, green, blue, alpha: Channel

    init(_ masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32)) {
        red = Channel(masks.red)
        green = Channel(masks.green)
        blue = Channel(masks.blue)
        alpha = Channel(masks.alpha)
    }

    /// The pixel as a big-endian-packed `R | G<<8 | B<<16 | A<<24` word.
    func rgba(_ pixel: UInt32) -> UInt32 {
        red.value(pixel, absent: 0) | green.value(pixel, absent: 0) << 8 | blue.value(pixel, absent: 0) << 16
            | alpha.value(pixel, absent: 255) << 24
    }
}
