#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// EXIF orientation (tag 0x0112): how stored pixels must be turned to appear upright.
public enum ImageOrientation: Int, Sendable, CaseIterable {
    /// Stored upright.
    case up = 1
    /// Mirrored left to right.
    case upMirrored = 2
    /// Rotated 180°.
    case down = 3
    /// Mirrored top to bottom.
    case downMirrored = 4
    /// Mirrored along the top-left/bottom-right diagonal (transpose).
    case leftMirrored = 5
    /// Needs a 90° clockwise turn to be upright.
    case right = 6
    /// Mirrored along the other diagonal (transverse).
    case rightMirrored = 7
    /// Needs a 90° counter-clockwise turn to be upright.
    case left = 8

    /// True when turning upright swaps width and height (raw values 5 to 8).
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The orientation stored in a TIFF-structured EXIF payload (starting `II*\0` or `MM\0*`,
    /// optionally preceded by `Exif\0\0`); ``up`` when absent, unreadable or outside 1...8.
    /// A tag stored with the wrong integer type (LONG instead of SHORT) is still honoured.
    public init(exifPayload: Data) {
        self = Self.parse(exifPayload) ?? .up
    }

    /// The orientation from the first APP1 `Exif` segment of a JPEG; ``up`` when there is none before
    /// the image data, or the data is not a well-formed JPEG header.
    public init(jpegData: Data) {
        self = jpegData.withUnsafeBytes { raw -> ImageOrientation in
            let b = raw.bindMemory(to: UInt8.self)
            var i = 2
            while i + 4 <= b.count {
                guard b[i] == 0xFF else { return .up }
                let marker = b[i + 1]
                if marker == 0xFF { i += 1; continue }  // fill byte
                if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
                if marker == 0xDA || marker == 0xD9 { return .up }  // image data starts: no EXIF before it
                let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
                guard length >= 2, i + 2 + length <= b.count else { return .up }
                if marker == 0xE1, length >= 8,
                    b[i + 4] == 0x45, b[i + 5] == 0x78, b[i + 6] == 0x69, b[i + 7] == 0x66, b[i + 8] == 0, b[i + 9] == 0
                {
                    let start = i + 10, end = i + 2 + length
                    return ImageOrientation(exifPayload: Data(b[start..<end]))
                }
                i += 2 + length
            }
            return .up
        }
    }

    private static func parse(_ data: Data) -> ImageOrientation? {
        guard let exif = IFDReader(EXIFData.strippingJPEGPrefix(data)), let o = exif.ifd0Entry(tag: 0x0112),
            let type = exif.u16(o + 2)
        else { return nil }
        let value: Int?
        switch type {
        case 3: value = exif.u16(o + 8)  // SHORT
        case 4, 9: value = exif.u32(o + 8)  // LONG / SLONG written by some tools
        case 1, 7: value = o + 8 < exif.bytes.count ? Int(exif.bytes[o + 8]) : nil
        default: value = nil
        }
        return value.flatMap(ImageOrientation.init(rawValue:))
    }

    /// `pixels` turned upright: rotated and/or mirrored as this orientation says.
    ///
    /// - Parameter pixels: The pixels as stored in the file.
    /// - Returns: The upright pixels; width and height are swapped when ``swapsDimensions`` is true.
    ///   For ``up`` this is `pixels` itself.
    /// - Throws: ``MagpieError/imageCreationFailed(reason:)`` when the output cannot be allocated.
    public func apply(to pixels: PixelBuffer) throws -> PixelBuffer {
        if self == .up { return pixels }
        let w = pixels.width, h = pixels.height
        let (ow, oh) = swapsDimensions ? (h, w) : (w, h)
        var output = try PixelBuffer.uninitialized(width: ow, height: oh)
        pixels.withUnsafeBytes { sourceRaw in
            output.withUnsafeMutableBytes { destRaw in
                let src = sourceRaw.bindMemory(to: UInt32.self)
                let dst = destRaw.bindMemory(to: UInt32.self)
                for y in 0..<h {
                    for x in 0..<w {
                        // (dx, dy): where source pixel (x, y) lands in the upright image.
                        let dx: Int, dy: Int
                        switch self {
                        case .up: (dx, dy) = (x, y)
                        case .upMirrored: (dx, dy) = (w - 1 - x, y)
                        case .down: (dx, dy) = (w - 1 - x, h - 1 - y)
                        case .downMirrored: (dx, dy) = (x, h - 1 - y)
                        case .leftMirrored: (dx, dy) = (y, x)
                        case .right: (dx, dy) = (h - 1 - y, x)
                        case .rightMirrored: (dx, dy) = (h - 1 - y, w - 1 - x)
                        case .left: (dx, dy) = (y, w - 1 - x)
                        }
                        dst[dy * ow + dx] = src[y * w + x]
                    }
                }
            }
        }
        return output
    }
}
