import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `ICCP`, `EXIF` and `XMP ` chunks of a WebP file, read by walking the RIFF chunk list and written through
/// libwebp's mux (which keeps the VP8X header consistent).
enum WebPMetadataChunks {
    /// The profile and metadata of a WebP, and its source facts (8-bit; alpha from VP8X, ALPH or VP8L).
    static func read(_ data: Data) -> (EmbeddedMetadata, ImageSourceInfo) {
        let b = [UInt8](data)
        var icc: Data?, exif: Data?, xmp: Data?
        var alpha = false
        var offset = 12
        while offset + 8 <= b.count {
            let fourcc = String(decoding: b[offset..<offset + 4], as: UTF8.self)
            let size = Int(b[offset + 4]) | Int(b[offset + 5]) << 8 | Int(b[offset + 6]) << 16 | Int(b[offset + 7]) << 24
            let start = offset + 8
            guard size >= 0, size <= b.count - start else { break }
            let payload = Data(b[start..<start + size])
            switch fourcc {
            case "VP8X" where size >= 1: alpha = alpha || b[start] & 0x10 != 0
            case "ALPH": alpha = true
            case "VP8L" where size >= 5: alpha = alpha || b[start + 4] & 0x10 != 0
            case "ICCP" where icc == nil: icc = payload
            case "EXIF" where exif == nil: exif = payload
            case "XMP " where xmp == nil: xmp = payload
            default: break
            }
            offset = start + size + (size & 1)
        }
        return (
            EmbeddedMetadata(colorProfile: icc.map { ColorProfile(iccData: $0) }, metadata: ImageMetadata(exif: exif, xmp: xmp)),
            ImageSourceInfo(bitDepth: 8, hasAlpha: alpha)
        )
    }

    /// `webp` rewritten with the given chunks; the input unchanged when all are nil.
    static func inserting(icc: Data?, exif: Data?, xmp: Data?, into webp: Data) throws -> Data {
        guard icc != nil || exif != nil || xmp != nil else { return webp }
        var error = mg_error()
        var output = mg_buffer()
        let status = CodecBridge.withBytes(of: webp) { file, fileCount in
            CodecBridge.withBytes(of: icc ?? Data()) { i, ic in
                CodecBridge.withBytes(of: exif ?? Data()) { e, ec in
                    CodecBridge.withBytes(of: xmp ?? Data()) { x, xc in
                        mg_webp_set_metadata(file, fileCount, i, ic, e, ec, x, xc, &output, &error)
                    }
                }
            }
        }
        guard status == 0 else { throw CodecBridge.encodingError(error, format: .webp) }
        return CodecBridge.data(adopting: output)
    }
}
