import CImageCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The colour and metadata chunks of a PNG: `iCCP`, `cICP`, `sRGB`, `gAMA`, `cHRM`, `eXIf` and the XMP `iTXt`; read
/// by walking chunk headers (no CRC pass, no pixels), and written back after IHDR when encoding.
enum PNGMetadataChunks {
    /// Colour description by the corpus rules' precedence (ICC, then cICP, then sRGB, then gAMA/cHRM), EXIF and XMP,
    /// plus the IHDR's bit depth and whether the file has alpha (an alpha channel or tRNS).
    static func read(_ data: Data) -> (EmbeddedMetadata, ImageSourceInfo?) {
        var icc: Data?, cicp: CICP?, srgb = false, gamma: Double?, chromaticities: Chromaticities?
        var sawICCP = false
        var exif: Data?, xmp: Data?
        var info: ImageSourceInfo?
        var offset = data.startIndex + 8
        guard data.count >= 8, data.prefix(8).elementsEqual(PNGChunks.signature) else { return (EmbeddedMetadata(), nil) }
        while offset + 12 <= data.endIndex {
            let length = Int(PNGChunks.readUInt32(data, offset))
            guard length <= data.endIndex - offset - 12 else { break }
            let type = String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let body = data[(offset + 8)..<(offset + 8 + length)]
            switch type {
            case "IHDR" where length >= 13:
                let depth = Int(body[body.startIndex + 8]), colorType = body[body.startIndex + 9]
                info = ImageSourceInfo(bitDepth: depth, hasAlpha: colorType == 4 || colorType == 6)
            case "tRNS": info?.hasAlpha = true
            case "iCCP" where !sawICCP:
                // The specification allows one; inflating each of many would multiply a zlib bomb's cost.
                sawICCP = true
                icc = inflateProfile(body)
            case "cICP" where length == 4:
                let b = [UInt8](body)
                cicp = CICP(colorPrimaries: UInt16(b[0]), transferCharacteristics: UInt16(b[1]),
                            matrixCoefficients: UInt16(b[2]), fullRange: b[3] != 0)
            case "sRGB": srgb = true
            case "gAMA" where length == 4:
                let value = Double(PNGChunks.readUInt32(data, body.startIndex))
                if value > 0 { gamma = value / 100_000 }
            case "cHRM" where length == 32:
                let v = (0..<8).map { Double(PNGChunks.readUInt32(data, body.startIndex + $0 * 4)) / 100_000 }
                chromaticities = Chromaticities(
                    whiteX: v[0], whiteY: v[1], redX: v[2], redY: v[3], greenX: v[4], greenY: v[5], blueX: v[6], blueY: v[7])
            case "eXIf" where exif == nil: exif = Data(body)
            case "iTXt" where xmp == nil: xmp = xmpPacket(body)
            case "IEND": offset = data.endIndex
            default: break
            }
            offset += 12 + length
        }
        let profile: ColorProfile? =
            if let icc { ColorProfile(iccData: icc) }
            else if let cicp { ColorProfile(cicp: cicp) }
            else if srgb { .sRGB }
            else if let gamma { ColorProfile(gamma: gamma, chromaticities: chromaticities, name: gammaName(gamma)) }
            else { nil }
        return (EmbeddedMetadata(colorProfile: profile, metadata: ImageMetadata(exif: exif, xmp: xmp)), info)
    }

    /// `png` with `iCCP`, `eXIf` and XMP `iTXt` chunks inserted right after IHDR (before PLTE, IDAT and acTL, as the
    /// specification orders them).
    static func inserting(icc: Data?, exif: Data?, xmp: Data?, into png: Data) -> Data {
        var chunks = Data()
        if let icc, !icc.isEmpty {
            var error = mg_error()
            var compressed = mg_buffer()
            let status = CodecBridge.withBytes(of: icc) { mg_zlib_deflate($0, $1, &compressed, &error) }
            if status == 0 {
                var payload = Data("icc\0".utf8)
                payload.append(0)  // compression method: zlib
                payload.append(CodecBridge.data(adopting: compressed))
                PNGChunks.write("iCCP", payload, to: &chunks)
            }
        }
        if let exif { PNGChunks.write("eXIf", exif, to: &chunks) }
        if let xmp {
            // Keyword, no compression, no language, no translated keyword, then the packet.
            var payload = Data("XML:com.adobe.xmp\0".utf8)
            payload.append(contentsOf: [0, 0, 0, 0])
            payload.append(xmp)
            PNGChunks.write("iTXt", payload, to: &chunks)
        }
        let ihdrEnd = png.startIndex + 8 + 25
        guard !chunks.isEmpty, png.count > 33 else { return png }
        var output = Data(png[..<ihdrEnd])
        output.append(chunks)
        output.append(png[ihdrEnd...])
        return output
    }

    /// The profile inside an `iCCP` body: a keyword, a NUL, the method byte, then zlib data (at most 4 MB).
    private static func inflateProfile(_ body: Data) -> Data? {
        guard let nul = body.prefix(80).firstIndex(of: 0), nul + 2 <= body.endIndex else { return nil }
        let compressed = body[(nul + 2)...]
        var output = mg_buffer()
        var error = mg_error()
        let status = CodecBridge.withBytes(of: Data(compressed)) { mg_zlib_inflate($0, $1, 4 << 20, &output, &error) }
        return status == 0 ? CodecBridge.data(adopting: output) : nil
    }

    /// The XMP packet of an uncompressed `iTXt` chunk with keyword `XML:com.adobe.xmp`.
    private static func xmpPacket(_ body: Data) -> Data? {
        let keyword = Array("XML:com.adobe.xmp\0".utf8)
        guard body.starts(with: keyword) else { return nil }
        var rest = body.dropFirst(keyword.count)
        guard rest.count >= 2, rest.first == 0 else { return nil }  // compressed XMP is rare; not read
        rest = rest.dropFirst(2)
        guard let languageEnd = rest.firstIndex(of: 0) else { return nil }
        rest = rest[(languageEnd + 1)...]
        guard let translatedEnd = rest.firstIndex(of: 0) else { return nil }
        return Data(rest[(translatedEnd + 1)...])
    }

    private static func gammaName(_ gamma: Double) -> String {
        let exponent = (1 / gamma * 1000).rounded() / 1000
        return "gamma \(exponent)"
    }
}
