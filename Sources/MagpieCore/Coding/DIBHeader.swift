/// Bounds-checked little-endian reads over a file's bytes: every read returns nil past the end, so a cut file gives
/// a typed error rather than a trap.
struct LittleEndianBytes {
    let bytes: UnsafeRawBufferPointer

    var count: Int { bytes.count }

    func u8(_ at: Int) -> Int? { at >= 0 && at < bytes.count ? Int(bytes[at]) : nil }

    func u16(_ at: Int) -> Int? {
        guard at >= 0, at + 2 <= bytes.count else { return nil }
        return Int(bytes[at]) | Int(bytes[at + 1]) << 8
    }

    func u32(_ at: Int) -> UInt32? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    func i32(_ at: Int) -> Int? { u32(at).map { Int(Int32(bitPattern: $0)) } }
}

/// A parsed device-independent bitmap header (BITMAPCOREHEADER, OS/2 2.x, BITMAPINFOHEADER and its V2 to V5
/// extensions): the size, pixel layout, palette and where the pixels start. Shared by BMP files and ICO/CUR entries.
struct DIBHeader {
    enum Compression { case rgb, rle8, rle4, bitFields }

    /// Header size in bytes (12, 16, 40, 52, 56, 64, 108 or 124).
    var headerSize: Int
    var width: Int
    /// Rows of the image (for an icon entry, half the stored height: the AND mask is the other half).
    var height: Int
    var topDown: Bool
    var bitCount: Int
    var compression: Compression
    /// Red, green, blue and alpha masks for 16- and 32-bit pixels (alpha 0: opaque).
    var masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32) = (0, 0, 0, 0)
    /// RGBA entries (opaque); indices past the end are drawn opaque black.
    var palette: [UInt32] = []
    /// Where the pixel rows start.
    var pixelOffset: Int
    /// The embedded ICC profile of a V5 header (`PROFILE_EMBEDDED`), when it lies inside the data.
    var iccProfile: Range<Int>?

    /// Bytes per stored row: rows are padded to 4 bytes.
    var stride: Int { (width * bitCount + 31) / 32 * 4 }

    /// Whether pixels carry alpha (a non-zero alpha mask).
    var hasAlphaChannel: Bool { masks.alpha != 0 }

    /// Bits per sample as stored, for ``ImageSourceInfo``: the index size for palettes, the widest mask otherwise.
    var bitsPerSample: Int {
        if bitCount <= 8 { return bitCount }
        return [masks.red, masks.green, masks.blue, masks.alpha].map { $0.nonzeroBitCount }.max() ?? 8
    }

    private static let validHeaderSizes: Set<Int> = [12, 16, 40, 52, 56, 64, 108, 124]
    private static let profileEmbedded: UInt32 = 0x4D42_4544  // 'MBED'

    /// Parses the header at `start`.
    ///
    /// - Parameters:
    ///   - bytes: The whole file.
    ///   - start: Where the DIB header begins (14 in a BMP file, the entry's offset in an icon).
    ///   - pixelOffset: The BMP file header's pixel offset; nil for an icon entry (pixels follow the palette).
    ///   - format: The format named in errors.
    ///   - limits: Checked against the declared size before anything is allocated.
    static func parse(
        _ bytes: LittleEndianBytes, at start: Int, pixelOffset: Int?, format: ImageFormat, limits: ImageDecodingLimits
    ) throws -> DIBHeader {
        func corrupt(_ message: String) -> MagpieError { .decodingFailed(reason: .corruptData(format, message: message)) }
        func truncated(_ message: String) -> MagpieError { .decodingFailed(reason: .truncatedData(format, message: message)) }

        guard let size32 = bytes.u32(start) else { throw truncated("the file ends inside the bitmap header") }
        let headerSize = Int(size32)
        guard validHeaderSizes.contains(headerSize) else {
            throw corrupt("header size \(headerSize) is not a BMP header")
        }
        guard start + headerSize <= bytes.count else { throw truncated("the file ends inside the \(headerSize)-byte header") }

        let width: Int, storedHeight: Int, planes: Int, bitCount: Int
        var rawCompression = 0, colorsUsed = 0
        if headerSize == 12 {
            width = bytes.u16(start + 4)!
            storedHeight = Int(Int16(truncatingIfNeeded: bytes.u16(start + 6)!))
            planes = bytes.u16(start + 8)!
            bitCount = bytes.u16(start + 10)!
        } else {
            width = bytes.i32(start + 4)!
            storedHeight = bytes.i32(start + 8)!
            planes = bytes.u16(start + 12)!
            bitCount = bytes.u16(start + 14)!
            if headerSize >= 40 {
                rawCompression = Int(bytes.u32(start + 16)!)
                colorsUsed = Int(bytes.u32(start + 32)!)
            }
        }
        guard planes == 1 else { throw corrupt("\(planes) colour planes (must be 1)") }
        guard width > 0, storedHeight != 0 else { throw corrupt("the header declares a \(width)x\(storedHeight) image") }
        var height = abs(storedHeight)
        if pixelOffset == nil {
            // An icon's height covers the colour bitmap and the AND mask below it.
            height /= 2
            guard height > 0 else { throw corrupt("icon entry of height \(storedHeight)") }
        }
        let pixels = width.multipliedReportingOverflow(by: height)
        guard !pixels.overflow, pixels.partialValue <= limits.maxPixelsPerFrame,
              pixels.partialValue <= limits.maxTotalBytes / 4
        else {
            throw MagpieError.decodingFailed(reason: .tooLarge(format, message: "the header declares \(width)x\(height) pixels"))
        }

        var header = DIBHeader(
            headerSize: headerSize, width: width, height: height, topDown: storedHeight < 0, bitCount: bitCount,
            compression: .rgb, pixelOffset: 0)
        var maskBytes = 0
        switch (rawCompression, bitCount) {
        case (0, 1), (0, 4), (0, 8), (0, 24): break
        case (0, 16): header.masks = (0x7C00, 0x03E0, 0x001F, 0)
        case (0, 32):
            // The fourth byte is padding in a BMP file, but an icon's 32-bit entry stores alpha there.
            header.masks = (0xFF_0000, 0xFF00, 0xFF, pixelOffset == nil ? 0xFF00_0000 : 0)
        case (0, 2):
            throw MagpieError.decodingFailed(reason: .unsupportedFormat(format, detail: "2 bits per pixel is not a Windows BMP depth"))
        case (0, _): throw corrupt("\(bitCount) bits per pixel")
        case (1, 8): header.compression = .rle8
        case (2, 4): header.compression = .rle4
        case (1, _), (2, _): throw corrupt("RLE compression with \(bitCount) bits per pixel")
        case (3, _) where headerSize == 64, (4, _) where headerSize == 64:
            throw MagpieError.decodingFailed(reason: .unsupportedFormat(format, detail: "OS/2 Huffman or RLE24 compression"))
        case (3, 16), (3, 32), (6, 16), (6, 32):
            header.compression = .bitFields
            let withAlpha = rawCompression == 6
            let maskStart = start + 40
            if headerSize == 40 { maskBytes = withAlpha ? 16 : 12 }
            guard let r = bytes.u32(maskStart), let g = bytes.u32(maskStart + 4), let b = bytes.u32(maskStart + 8) else {
                throw truncated("the file ends inside the bit-field masks")
            }
            var a: UInt32 = 0
            if headerSize >= 56 || (headerSize == 40 && withAlpha) {
                guard let value = bytes.u32(maskStart + 12) else { throw truncated("the file ends inside the bit-field masks") }
                a = value
            }
            header.masks = (r, g, b, a)
            for mask in [r, g, b, a] where !isContiguous(mask) || (bitCount == 16 && mask > 0xFFFF) {
                throw corrupt("bit-field mask 0x\(String(mask, radix: 16)) does not fit \(bitCount)-bit pixels")
            }
        case (3, _), (6, _): throw corrupt("bit fields with \(bitCount) bits per pixel")
        case (4, _), (5, _):
            throw MagpieError.decodingFailed(reason: .unsupportedFormat(format, detail: "embedded JPEG or PNG (BI_JPEG/BI_PNG)"))
        case (11...13, _):
            throw MagpieError.decodingFailed(reason: .unsupportedFormat(format, detail: "CMYK BMP"))
        default: throw corrupt("unknown compression \(rawCompression)")
        }

        // Palette: colorsUsed entries (0 meaning all 2^bits) of 3 bytes after a core header, 4 after the others.
        let paletteStart = start + headerSize + maskBytes
        let entrySize = headerSize == 12 ? 3 : 4
        var paletteCount = 0
        if bitCount <= 8 {
            let full = 1 << bitCount
            guard colorsUsed <= full else { throw corrupt("a palette of \(colorsUsed) entries for \(bitCount)-bit pixels") }
            paletteCount = colorsUsed == 0 ? full : colorsUsed
            guard paletteStart + paletteCount * entrySize <= bytes.count else { throw truncated("the file ends inside the palette") }
            header.palette = (0..<paletteCount).map { index in
                let at = paletteStart + index * entrySize
                let blue = UInt32(bytes.u8(at)!), green = UInt32(bytes.u8(at + 1)!), red = UInt32(bytes.u8(at + 2)!)
                return red | green << 8 | blue << 16 | 0xFF00_0000
            }
        }
        let paletteEnd = paletteStart + paletteCount * entrySize
        if let pixelOffset {
            guard pixelOffset >= start + headerSize + maskBytes else { throw corrupt("pixel data offset \(pixelOffset) lies inside the header") }
            header.pixelOffset = pixelOffset
        } else {
            header.pixelOffset = paletteEnd
        }

        if headerSize == 124, bytes.u32(start + 56) == profileEmbedded,
           let offset = bytes.u32(start + 112), let length = bytes.u32(start + 116), length > 0 {
            let from = start + Int(offset), to = from + Int(length)
            if to <= bytes.count { header.iccProfile = from..<to }
        }
        return header
    }

    /// A mask whose set bits form one run (or no bits at all).
    private static func isContiguous(_ mask: UInt32) -> Bool {
        guard mask != 0 else { return true }
        let shifted = UInt64(mask >> UInt32(mask.trailingZeroBitCount))
        return shifted & (shifted + 1) == 0
    }
}
