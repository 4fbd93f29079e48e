import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// HEIFCoder: decoding corpus files (the suite skips without the corpus); HEIF is never encoded.
@Suite("HEIF coder", .enabled(if: Corpus.directory != nil, "../shared/corpus is absent"))
struct HEIFCoderTests {
    let coder = HEIFCoder()

    static func corpus(_ path: String) throws -> Data {
        try Data(contentsOf: Corpus.directory!.appendingPathComponent(path))
    }

    static func limited(pixels: Int) -> ImageDecodingOptions {
        var options = ImageDecodingOptions.default
        options.limits = ImageDecodingLimits(maxPixelsPerFrame: pixels)
        return options
    }

    @Test("the primary image decodes as one opaque frame with its nclx code points")
    func decodesPrimaryImage() throws {
        let image = try coder.decode(Self.corpus("heif/RGB_8__29x100.heif"), options: .default)
        #expect(image.format == .heic)
        #expect(image.width == 29 && image.height == 100 && image.frames.count == 1)
        #expect(image.loopCount == nil)
        #expect(image.sourceInfo?.bitDepth == 8 && image.sourceInfo?.hasAlpha == false)
        #expect(image.pixels.rgbaBytes.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 })
    }

    @Test("12-bit samples are scaled to 8 bits (white stays 255) and the depth and alpha are reported")
    func scalesHighBitDepth() throws {
        let image = try coder.decode(Self.corpus("heif/RGBA_12__29x100.heif"), options: .default)
        #expect(image.sourceInfo?.bitDepth == 12)
        #expect(image.sourceInfo?.hasAlpha == true)
        let ten = try coder.decode(Self.corpus("heif/L_10__29x100.heif"), options: .default)
        #expect(ten.sourceInfo?.bitDepth == 10)
        #expect(ten.pixels.rgbaBytes.max() == 255)
    }

    @Test("alpha is decoded: transparent and opaque pixels both occur")
    func decodesAlpha() throws {
        let image = try coder.decode(Self.corpus("heif/tux-alpha.heic"), options: .default)
        let alphas = image.pixels.rgbaBytes.enumerated().filter { $0.offset % 4 == 3 }.map(\.element)
        #expect(alphas.contains(0) && alphas.contains(255))
    }

    @Test("a pitm naming a thumbnail decodes the top-level image instead")
    func primaryThumbnailFallsBackToTopLevelImage() throws {
        let image = try coder.decode(Self.corpus("heif/invalid_id.heic"), options: .default)
        #expect(image.width == 564 && image.height == 870)
    }

    @Test("the ICC profile is reported with its name, nclx as CICP")
    func reportsColour() throws {
        let icc = try coder.decode(Self.corpus("icc/empty_icc.heic"), options: .default)
        #expect(icc.colorProfile?.iccData != nil)
        #expect(icc.colorProfile?.name == "Display P3")
        let nclx = try coder.decode(Self.corpus("icc/tower-nclx-p3.heic"), options: .default)
        #expect(nclx.colorProfile?.cicp == CICP(colorPrimaries: 12, transferCharacteristics: 13,
                                                 matrixCoefficients: 6, fullRange: true))
        #expect(nclx.colorProfile?.iccData == nil)
    }

    @Test("a grid whose own description declares a canvas over the limit is refused before libheif allocates it")
    func derivedCanvasOverTheLimit() throws {
        var data = try Self.corpus("icc/pug.heic")
        // The grid payload's 16-bit output size, 4032x3024 (its ispe keeps saying so), becomes 30000x30000.
        let size = try #require(data.range(of: Data([0x0F, 0xC0, 0x0B, 0xD0])))
        data.replaceSubrange(size, with: [0x75, 0x30, 0x75, 0x30])
        guard case .tooLarge(.heic, let detail) = TestImages.decodingReason({ try coder.decode(data, options: .default) }) else {
            Issue.record("a 900 MP grid canvas should be tooLarge")
            return
        }
        #expect("\(detail)".contains("grid"))
        // The untouched file still decodes: the check reads the same size libheif uses.
        #expect(try coder.decode(Self.corpus("icc/pug.heic"), options: .default).width == 4032)
    }

    /// 643 bytes cut down from a decode-fuzzer finding: a 128x128 image whose alpha plane is an overlay (`iovl`)
    /// item declaring a 19379x32767 canvas; its `ispe` says 128x128. The coded data is zeros: the size check comes
    /// before any decoding.
    static let overlayBomb = Data(base64Encoded: [
        "AAAAGGZ0eXBoZWljAAAAAG1pZjFoZWljAAACRW1ldGEAAAAAAAAAIWhkbHIAAAAAAAAAAHBpY3QAAAAAAAAAAAAAAAAAAAAADnBp",
        "dG0AAAAAAAEAAAA0aWxvYwAAAABEQAACAAIAAAAAAmUAAQAAAAAAAAAOAAEAAAAAAnMAAQAAAAAAAAAQAAAAOGlpbmYAAAAAAAIA",
        "AAAVaW5mZQIAAAAAAQAAaHZjMQAAAAAVaW5mZQIAAAAAAgAAaW92bAAAAAGEaXBycAAAAV9pcGNvAAAAcmh2Y0MBBAgAAAAAAAAA",
        "AAD/8AD8/Pj4AAAPAyAAAQAXQAEMAf//BAgAAAMAn/gAAAMAAP+6AkAhAAEAJ0IBAQQIAAADAJ/4AAADAAD/wECAgWW6kkaa5sCA",
        "AAADAIAAAAMAhCIAAQAGRAHBcYkSAAAAFGlzcGUAAAAAAAAAgAAAAIAAAAAOcGl4aQAAAAABCAAAACdhdXhDAAAAAHVybjptcGVn",
        "OmhldmM6MjAxNTphdXhpZDoxAAAAAHhodmNDAQQIAAAAAAAAAAAA//AA/P/4+AAADwMgAAEAF0ABDAH//wQIAAADAJ44AAADAAD/",
        "ugJAIQABACtCAQEECAAAAwCeOAAAAwAA/5ACBAQLLdSSNNc3AQ0ABAAAAwAEAAADAAQgIgABAAhEAcFwMGCRIAAAABRpc3BlAAAA",
        "AAAAAIAAAACAAAAAEHBpeGkAAAAAAwgICAAAAB1pcG1hAAAAAAAAAAIAAgSBAoOEAAEDhQaHAAAAGmlyZWYAAAAAAAAADmF1eGwA",
        "AgABAAEAAAAmbWRhdAAACLgoAa4LcBlLs3//AAAAAAAAAAAAAAAAAAAAAA==",
    ].joined())!

    /// 820 bytes cut down from a decode-fuzzer finding (23 KB, on which libheif 1.15 and its `heif-info` never
    /// return): the primary image is a grid whose alpha plane (`auxl`) is a grid whose tile (`dimg`) is the primary
    /// image. The coded data is zeros here; the reference check comes before any decoding.
    static let referenceCycle = Data(base64Encoded: [
        "AAAAGGZ0eXBoZWljAAAAAG1pZjFoZWljAAADBG1ldGEAAAAAAAAAIWhkbHIAAAAAAAAAAHBpY3QAAAAAAAAAAAAAAAAAAAAADnBp",
        "dG0AAAAAAAIAAAAYaWRhdAAAAAABggGLAAAAAAGCAYsAAABgaWxvYwEAAABEQAAEAAEAAAAAAAADJAABAAAAAAAAAAgAAgABAAAA",
        "AAAAAAEAAAAAAAAACAADAAAAAAAAAywAAQAAAAAAAAAIAAQAAQAAAAAAAAABAAAACAAAAAgAAABiaWluZgAAAAAABAAAABVpbmZl",
        "AgAAAQABAABodmMxAAAAABVpbmZlAgAAAAACAABncmlkAAAAABVpbmZlAgAAAQADAABodmMxAAAAABVpbmZlAgAAAAAEAABncmlk",
        "AAAAAblpcHJwAAABjGlwY28AAAB6aHZjQwEDcAAAAAAAAAAAAD/wAPz9+PgAAA8DIAABABhAAQwB//8DcAAAAwCQAAADAAADAD+6",
        "AkAhAAEALUIBAQNwAAADAJAAAAMAAAMAP6AMSAZHJeW6kkprm4EBAwIAAAMAAgAAAwACECIAAQAHRAHBcrBiQAAAABRpc3BlAAAA",
        "AAAAAYIAAAGMAAAAFGlzcGUAAAAAAAABggAAAYsAAAAQcGl4aQAAAAADCAgIAAAAdWh2Y0MBBAgAAAAAAAAAAAA/8AD8/Pj4AAAP",
        "AyAAAQAXQAEMAf//BAgAAAMAn/gAAAMAAD+6AkAhAAEAKUIBAQQIAAADAJ/4AAADAAA/wDEgGRzy5bqSSmubAgAAAwACAAADAAIQ",
        "IgABAAdEAcFysGJAAAAAFGlzcGUAAAAAAAABggAAAYwAAAAUaXNwZQAAAAAAAAGCAAABiwAAAA5waXhpAAAAAAEIAAAAJ2F1eEMA",
        "AAAAdXJuOm1wZWc6aGV2YzoyMDE1OmF1eGlkOjEAAAAAJWlwbWEAAAAAAAAABAABAoECAAICA4QAAwKFBgAEAweIiQAAADZpcmVm",
        "AAAAAAAAAA5kaW1nAAIAAQABAAAADmRpbWcABAABAAIAAAAOYXV4bAAEAAEAAgAAABhtZGF0AAAAAAAAAAAAAAAAAAAAAA==",
    ].joined())!

    @Test("images that are inputs of themselves through grid tiles and alpha planes are refused before decoding")
    func referenceCycleIsCorrupt() {
        guard case .corruptData(.heic, let detail) = TestImages.decodingReason({ try coder.decode(Self.referenceCycle, options: .default) }) else {
            Issue.record("a grid whose alpha plane is a grid of it should be corruptData")
            return
        }
        #expect("\(detail)".contains("depends on itself"))
    }

    @Test("an overlay whose canvas is over the limit is refused from its description, whatever role it plays")
    func overlayCanvasOverTheLimit() {
        guard case .tooLarge(.heic, let detail) = TestImages.decodingReason({ try coder.decode(Self.overlayBomb, options: .default) }) else {
            Issue.record("a 635 MP overlay canvas should be tooLarge")
            return
        }
        #expect("\(detail)".contains("overlay"))
    }

    @Test("an nclx box with colour primaries libheif rejects decodes without a profile (its rejected copy is freed)")
    func unknownNCLXPrimaries() throws {
        var data = try Self.corpus("icc/tower-nclx-p3.heic")
        let colr = try #require(data.range(of: Data("colrnclx".utf8)))
        // colour_primaries, the first 16-bit field after the type: 12 (P3) becomes 4108, as the decode fuzzer wrote.
        data[colr.upperBound] = 0x10
        data[colr.upperBound + 1] = 0x0C
        let image = try coder.decode(data, options: .default)
        #expect(image.colorProfile == nil)
        #expect(image.width > 0)
        // The leak itself shows only under LeakSanitizer, as the decode fuzzer runs it (scripts/fuzz); the sanitize
        // script turns leak detection off.
    }

    @Test("EXIF (without libheif's 4-byte offset) and XMP are reported")
    func reportsMetadata() throws {
        let image = try coder.decode(Self.corpus("heif/L_exif_xmp_iptc.heic"), options: .default)
        let exif = try #require(image.metadata.exif)
        #expect(exif.starts(with: Array("II*\0".utf8)) || exif.starts(with: Array("MM\0*".utf8)))
        let xmp = try #require(image.metadata.xmp)
        #expect(String(decoding: xmp, as: UTF8.self).contains("xmpmeta"))
    }

    @Test("a 200 MP declaration is refused as too large, and the header still tells its displayed size")
    func bombIsTooLarge() throws {
        let data = try Self.corpus("bombs-formats/200MP.heic")
        #expect(TestImages.decodingReason { try coder.decode(data, options: .default) }?.isTooLarge == true)
        let header = try ImageCoderRegistry.shared.header(of: data)
        #expect(header == ImageHeader(format: .heic, width: 12240, height: 16320, frameCount: 1))
    }

    @Test("a small maxPixelsPerFrame refuses a normal file with tooLarge")
    func refusesOverPixelLimit() throws {
        let data = try Self.corpus("heif/kif-rgb.heif")
        #expect(TestImages.decodingReason { try coder.decode(data, options: Self.limited(pixels: 128 * 128 - 1)) }?
            .isTooLarge == true)
        #expect(try coder.decode(data, options: Self.limited(pixels: 128 * 128)).width == 128)
    }

    @Test("truncated and corrupt files throw typed errors carrying libheif's message")
    func corruptFilesThrow() throws {
        let truncated = try Self.corpus("heif-corrupt/pug-truncated.heic")
        let reason = TestImages.decodingReason { try coder.decode(truncated, options: .default) }
        guard case .truncatedData(_, let message)? = reason else {
            Issue.record("expected truncatedData, got \(String(describing: reason))")
            return
        }
        #expect(message.contains("end of file"))
        for name in ["clusterfuzz-5643900194127872.heic", "github_46_1.heic", "github_45.heic", "tower-truncated-meta.heic"] {
            let data = try Self.corpus("heif-corrupt/\(name)")
            #expect(TestImages.decodingReason { try coder.decode(data, options: .default) } != nil, "\(name)")
        }
        #expect(TestImages.decodingReason { try coder.decode(Data(), options: .default) } == .emptyData)
    }

    @Test("HEIF is decode-only, and the registry decodes AVIF with the AVIF coder and HEIF with the HEIF coder")
    func registryRoutesByBrand() throws {
        #expect(!coder.canEncode)
        #expect(!ImageCoderRegistry.shared.canEncode(.heic))
        #expect(throws: MagpieError.self) {
            try ImageCoderRegistry.shared.encode(Image(pixels: TestImages.gradient(width: 4, height: 4)), as: .heic)
        }
        let heif = try ImageCoderRegistry.shared.decode(Self.corpus("avif-heif/hopper.heif"))
        #expect(heif.format == .heic)
        let avif = try ImageCoderRegistry.shared.decode(Self.corpus("avif-heif/exif.avif"))
        #expect(avif.format == .avif)
    }
}
