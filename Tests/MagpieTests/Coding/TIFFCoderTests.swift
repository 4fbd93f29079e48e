import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// TIFFCoder: small files are built here (``TIFFTestFile``); compressions and layouts libtiff handles come from the
/// shared corpus when it is present.
@Suite("TIFF coder")
struct TIFFCoderTests {
    let coder = TIFFCoder()

    func pixel(_ image: Image, _ x: Int, _ y: Int, frame: Int = 0) -> [UInt8] {
        let c = image.frames[frame].pixels[x, y]
        return [c.red, c.green, c.blue, c.alpha]
    }

    // MARK: Sample layouts

    @Test("8-bit RGB decodes as stored, opaque")
    func rgb8() throws {
        let image = try coder.decode(TIFFTestFile.make([TIFFTestFile.rgbPage()]), options: .default)
        #expect(image.format == .tiff && image.width == 3 && image.height == 2 && image.frames.count == 1)
        #expect(pixel(image, 2, 1) == [80, 60, 12, 255])
        #expect(image.sourceInfo?.bitDepth == 8 && image.sourceInfo?.hasAlpha == false)
        #expect(image.sourceInfo?.entries.isEmpty == true)
    }

    @Test("16-bit RGB becomes (v*255+32767)/65535; 16-bit gray keeps libtiff's high byte; MinIsWhite is inverted")
    func sixteenBitAndMinIsWhite() throws {
        let values = [255, 32896, 65535]  // 255 rounds up to 1 though its high byte is 0; 32896 is 128 * 257
        let rgb = TIFFTestFile.Page(
            width: 1, height: 1, bitsPerSample: 16, samplesPerPixel: 3, photometric: 2,
            data: values.flatMap(TIFFTestFile.le16))
        let image = try coder.decode(TIFFTestFile.make([rgb]), options: .default)
        #expect(pixel(image, 0, 0) == [1, 128, 255, 255])
        #expect(image.sourceInfo?.bitDepth == 16)
        // The corpus reference for 16-bit gray is libtiff's RGBA interface, which uses the high byte.
        let gray = TIFFTestFile.Page(
            width: 2, height: 1, bitsPerSample: 16, samplesPerPixel: 1, photometric: 1,
            data: TIFFTestFile.le16(255) + TIFFTestFile.le16(32896))
        let grayImage = try coder.decode(TIFFTestFile.make([gray]), options: .default)
        #expect(pixel(grayImage, 0, 0)[0] == 0 && pixel(grayImage, 1, 0)[0] == 128)
        let white = TIFFTestFile.Page(width: 2, height: 1, samplesPerPixel: 1, photometric: 0, data: [0, 200])
        let inverted = try coder.decode(TIFFTestFile.make([white]), options: .default)
        #expect(pixel(inverted, 0, 0) == [255, 255, 255, 255] && pixel(inverted, 1, 0) == [55, 55, 55, 255])
    }

    @Test("a palette's 16-bit colormap entries are shifted right by 8")
    func palette() throws {
        let map: [UInt16] = [0x1234, 0xFFFF, 0x8000, 0x0100, 0x00FF, 0xABCD]  // red, green, blue of 2 entries
        let page = TIFFTestFile.Page(
            width: 8, height: 1, bitsPerSample: 1, samplesPerPixel: 1, photometric: 3, data: [0b1000_0000],
            colormap: map)
        let image = try coder.decode(TIFFTestFile.make([page]), options: .default)
        #expect(pixel(image, 0, 0) == [0xFF, 0x01, 0xAB, 255])
        #expect(pixel(image, 1, 0) == [0x12, 0x80, 0x00, 255])
    }

    @Test("CMYK without a profile uses R = (255-C)*(255-K)/255 rounded")
    func cmykFormula() throws {
        let page = TIFFTestFile.Page(width: 1, height: 1, samplesPerPixel: 4, photometric: 5, data: [10, 100, 200, 40])
        let image = try coder.decode(TIFFTestFile.make([page]), options: .default)
        let inks: [Int] = [10, 100, 200]
        let expected: [UInt8] = inks.map { (ink: Int) -> UInt8 in UInt8(((255 - ink) * 215 + 127) / 255) }
        #expect(pixel(image, 0, 0) == expected + [255])
    }

    @Test("associated alpha is un-premultiplied with min(255, c*255/a); unassociated alpha is kept")
    func alphaKinds() throws {
        let data: [UInt8] = [50, 100, 200, 128, 7, 9, 11, 0]
        var page = TIFFTestFile.Page(
            width: 2, height: 1, samplesPerPixel: 4, photometric: 2, data: data, extraSamples: [1])
        let associated = try coder.decode(TIFFTestFile.make([page]), options: .default)
        #expect(pixel(associated, 0, 0) == [99, 199, 255, 128])
        #expect(associated.sourceInfo?.hasAlpha == true)
        page.extraSamples = [2]
        let straight = try coder.decode(TIFFTestFile.make([page]), options: .default)
        #expect(pixel(straight, 0, 0) == [50, 100, 200, 128])
        #expect(pixel(straight, 1, 0)[3] == 0)
    }

    // MARK: Orientation

    @Test("the Orientation tag is applied for all eight values, and only when asked", arguments: 1...8)
    func orientation(_ value: Int) throws {
        var page = TIFFTestFile.rgbPage(width: 3, height: 2)
        let upright = try coder.decode(TIFFTestFile.make([page]), options: .default).pixels
        page.orientation = value
        let file = TIFFTestFile.make([page])
        let image = try coder.decode(file, options: .default)
        let expected = try ImageOrientation(rawValue: value)!.apply(to: upright)
        #expect(image.pixels == expected)
        #expect(image.width == (value >= 5 ? 2 : 3))
        var keep = ImageDecodingOptions.default
        keep.appliesOrientation = false
        #expect(try coder.decode(file, options: keep).pixels == upright)
    }

    // MARK: Pages

    @Test("pages become frames of the first page's size; every page is listed in entries")
    func multiPage() throws {
        var second = TIFFTestFile.rgbPage(width: 2, height: 3)
        second.orientation = 1
        let gray = TIFFTestFile.Page(
            width: 4, height: 1, bitsPerSample: 16, samplesPerPixel: 1, photometric: 1,
            data: [UInt8](repeating: 0xFF, count: 8))
        let file = TIFFTestFile.make([TIFFTestFile.rgbPage(), second, gray])
        let image = try coder.decode(file, options: .default)
        #expect(image.frames.count == 3 && image.loopCount == nil)
        #expect(image.frames.allSatisfy { $0.pixels.width == 3 && $0.pixels.height == 2 && $0.duration == .zero })
        // A smaller page sits at the top-left on a transparent canvas; a larger one is cropped.
        #expect(pixel(image, 1, 1, frame: 1) == [40, 60, 11, 255])
        #expect(pixel(image, 2, 0, frame: 1) == [0, 0, 0, 0])
        #expect(pixel(image, 2, 0, frame: 2) == [255, 255, 255, 255] && pixel(image, 0, 1, frame: 2)[3] == 0)
        #expect(image.sourceInfo?.entries == [
            .init(width: 3, height: 2, bitDepth: 8), .init(width: 2, height: 3, bitDepth: 8),
            .init(width: 4, height: 1, bitDepth: 16),
        ])
        var first = ImageDecodingOptions.default
        first.onlyFirstFrame = true
        let one = try coder.decode(file, options: first)
        #expect(one.frames.count == 1 && one.sourceInfo?.entries.count == 3)
        let header = try coder.header(of: file)
        #expect(header == ImageHeader(format: .tiff, width: 3, height: 2, frameCount: 3))
    }

    @Test("more pages than maxFrameCount is tooLarge")
    func pageLimit() throws {
        let file = TIFFTestFile.make(Array(repeating: TIFFTestFile.rgbPage(), count: 3))
        var options = ImageDecodingOptions.default
        options.limits.maxFrameCount = 2
        let error = #expect(throws: MagpieError.self) { try coder.decode(file, options: options) }
        guard case .decodingFailed(.tooLarge) = error else { Issue.record("\(String(describing: error))"); return }
        options.onlyFirstFrame = true
        #expect(try coder.decode(file, options: options).frames.count == 1)
    }

    // MARK: Limits and errors

    @Test("a declared size over the pixel limit is refused from the IFD, before allocation")
    func bomb() throws {
        let page = TIFFTestFile.Page(
            width: 100_000, height: 100_000, samplesPerPixel: 1, photometric: 1, data: [0, 0, 0, 0])
        let file = TIFFTestFile.make([page])
        let error = #expect(throws: MagpieError.self) { try coder.decode(file, options: .default) }
        guard case .decodingFailed(.tooLarge) = error else { Issue.record("\(String(describing: error))"); return }
        // The header read still describes it.
        #expect(try coder.header(of: file).width == 100_000)
        #expect(try ImageCoderRegistry.shared.header(of: file).height == 100_000)
    }

    @Test("a strip cut short fails with libtiff's own message from the per-open handler")
    func truncatedStrip() throws {
        var page = TIFFTestFile.rgbPage(width: 40, height: 40)
        page.declaredStripBytes = page.data.count
        page.data = Array(page.data.prefix(100))
        let file = TIFFTestFile.make([page])
        let error = #expect(throws: MagpieError.self) { try coder.decode(file, options: .default) }
        let text = "\(String(describing: error))"
        #expect(text.contains("libtiff:"), "\(text)")
        guard case .decodingFailed(.truncatedData) = error else { Issue.record("\(text)"); return }
    }

    @Test("concurrent decodes keep their own libtiff errors (per-open handlers)")
    func concurrentHandlers() async throws {
        var broken = TIFFTestFile.rgbPage(width: 40, height: 40)
        broken.declaredStripBytes = broken.data.count
        broken.data = Array(broken.data.prefix(100))
        let bad = TIFFTestFile.make([broken]), good = TIFFTestFile.make([TIFFTestFile.rgbPage(width: 40, height: 40)])
        let coder = self.coder
        let results = await withTaskGroup(of: (Bool, Bool).self) { group in
            for index in 0..<64 {
                group.addTask {
                    let wantsGood = index % 2 == 0
                    let decoded = (try? coder.decode(wantsGood ? good : bad, options: .default)) != nil
                    return (wantsGood, decoded)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.0 == $0.1 })
    }

    @Test("a file that is not a readable TIFF is a typed decoding error")
    func garbage() throws {
        #expect(throws: MagpieError.self) { try coder.decode(Data("II*\0".utf8) + Data(repeating: 0xFF, count: 8), options: .default) }
        #expect(throws: MagpieError.self) { try coder.decode(Data("MM\0*".utf8), options: .default) }
    }

    // MARK: Metadata

    @Test("the ICC tag and the XMP packet are reported; BigTIFF is recognised")
    func metadata() throws {
        var page = TIFFTestFile.rgbPage()
        page.xmp = Array("<x:xmpmeta/>".utf8)
        page.icc = [UInt8](repeating: 7, count: 200)
        let image = try coder.decode(TIFFTestFile.make([page]), options: .default)
        #expect(image.metadata.xmp == Data("<x:xmpmeta/>".utf8))
        #expect(image.colorProfile?.iccData == Data(repeating: 7, count: 200))
        #expect(coder.canDecode(Data([0x49, 0x49, 0x2B, 0x00, 8, 0, 0, 0])))
        #expect(coder.canDecode(Data([0x4D, 0x4D, 0x00, 0x2B])))
        #expect(!coder.canDecode(Data([0x49, 0x49, 0x2C, 0x00])))
    }

    @Test("EXIF and GPS IFDs become a stand-alone EXIF payload that a JPEG keeps, orientation reset to 1")
    func exifAndGPS() throws {
        var page = TIFFTestFile.rgbPage()
        page.orientation = 6
        let taken = Array("2024:01:02 03:04:05\0".utf8)
        let latitude = [51, 1, 30, 1, 0, 1].flatMap(TIFFTestFile.le32)
        page.exif = [TIFFTestFile.Entry(tag: 0x9003, type: 2, count: taken.count, value: taken)]
        page.gps = [
            TIFFTestFile.Entry(tag: 0x0000, type: 1, count: 4, value: [2, 3, 0, 0]),
            TIFFTestFile.Entry(tag: 0x0002, type: 5, count: 3, value: latitude),
        ]
        let image = try coder.decode(TIFFTestFile.make([page]), options: .default)
        #expect(image.metadataKinds == [.exif, .gps])
        let payload = try #require(image.metadata.exif)
        let reader = try #require(IFDReader(payload))
        // IFD0 keeps Orientation and the two pointers, not the strip tags.
        #expect(reader.ifd0Entry(tag: 0x0112) != nil)
        #expect(reader.ifd0Entry(tag: 273) == nil)
        let exifEntry = try #require(reader.ifd0Entry(tag: 0x8769))
        let exifIFD = try #require(reader.u32(exifEntry + 8))
        #expect(reader.u16(exifIFD) == 1 && reader.u16(exifIFD + 2) == 0x9003)
        let takenAt = try #require(reader.u32(exifIFD + 2 + 8))
        #expect(Array(reader.bytes[takenAt..<takenAt + taken.count]) == taken)
        let gpsEntry = try #require(reader.ifd0Entry(tag: 0x8825))
        let gpsIFD = try #require(reader.u32(gpsEntry + 8))
        let latitudeAt = try #require(reader.u32(gpsIFD + 2 + 12 + 8))
        #expect(Array(reader.bytes[latitudeAt..<latitudeAt + 24]) == latitude)

        var options = ImageEncodingOptions()
        options.metadata = .keep
        let jpeg = try JPEGCoder().encode(image, options: options)
        let back = try JPEGCoder().decode(jpeg, options: .default)
        #expect(back.metadataKinds.contains(.gps))
        let kept = try #require(back.metadata.exif)
        #expect(IFDReader(EXIFData.strippingJPEGPrefix(kept))?.ifd0Entry(tag: 0x0112).flatMap {
            IFDReader(EXIFData.strippingJPEGPrefix(kept))?.u16($0 + 8)
        } == 1)
    }

    @Test("a TIFF without EXIF or GPS IFDs reports no EXIF; damaged pointers are dropped, not followed")
    func noEXIF() throws {
        #expect(try coder.decode(TIFFTestFile.make([TIFFTestFile.rgbPage()]), options: .default).metadata.exif == nil)
        var page = TIFFTestFile.rgbPage()
        page.exif = [TIFFTestFile.Entry(tag: 0x9003, type: 2, count: 4, value: Array("abc\0".utf8))]
        var file = [UInt8](TIFFTestFile.make([page]))
        // Point the EXIF IFD past the end of the file.
        let ifd0 = 8, count = Int(file[ifd0]) | Int(file[ifd0 + 1]) << 8
        for i in 0..<count where Int(file[ifd0 + 2 + i * 12]) | Int(file[ifd0 + 3 + i * 12]) << 8 == 0x8769 {
            file.replaceSubrange(ifd0 + 2 + i * 12 + 8..<ifd0 + 2 + i * 12 + 12, with: TIFFTestFile.le32(1 << 30))
        }
        #expect(TIFFEXIFPayload.payload(fromTIFF: Data(file)) == nil)
    }

    @Test("the corpus's TIFF with EXIF and GPS directories reports both", .enabled(if: Corpus.directory != nil))
    func corpusEXIF() throws {
        let url = try #require(Corpus.directory).appendingPathComponent("tiff/custom_dir_EXIF_GPS.tiff")
        guard let data = try? Data(contentsOf: url) else { return }
        let kinds = try coder.decode(data, options: .default).metadataKinds
        #expect(kinds.contains(.exif) && kinds.contains(.gps))
    }

    // MARK: Corpus

    @Test("corpus compressions and layouts decode: LZW, deflate, PackBits, JPEG, OJPEG, WebP, LZMA, G4, tiles, planar, BigTIFF",
          .enabled(if: Corpus.directory != nil))
    func corpusKinds() throws {
        let names = [
            "tiff/hopper.tif", "tiff/tiff_adobe_deflate.tif", "tiff/tower-packbits.tif", "tiff/hopper_jpg.tif",
            "tiff/ojpeg_zackthecat_subsamp22_single_strip.tiff", "tiff/hopper_webp.tif", "tiff/hopper_lzma.tif",
            "tiff/g4-fillorder-test.tif", "tiff/tiff_tiled_planar_lzw.tiff", "tiff/hopper_bigtiff.tif",
            "tiff/tiff_tiled_cmyk_jpeg.tif", "tiff/tiff_tiled_ycbcr_jpeg_1x1_sampling.tif",
        ]
        for name in names {
            let data = try Data(contentsOf: Corpus.directory!.appendingPathComponent(name))
            let image = try ImageCoderRegistry.shared.decode(data)
            #expect(image.format == .tiff && image.width > 0, "\(name)")
        }
    }

    @Test("corrupt, truncated and bomb corpus files fail with typed errors", .enabled(if: Corpus.directory != nil))
    func corpusErrors() throws {
        let names = [
            "tiff-corrupt/tower-truncated.tif", "tiff-corrupt/seek_too_large.tif", "tiff-corrupt/bug780269.tif",
            "tiff-corrupt/libtiff_segfault.tif", "tiff-corrupt/oom-225817ca0f8c663be7ab4b9e717b02c661e66834.tif",
            "bombs-formats/strip-100000x100000.tif", "bombs-formats/bug784903-overflow-dimensions.tiff",
        ]
        for name in names {
            let data = try Data(contentsOf: Corpus.directory!.appendingPathComponent(name))
            #expect(throws: MagpieError.self, "\(name)") { try coder.decode(data, options: .default) }
        }
    }

    @Test("CMYK with an embedded CMYK profile is converted through it when sRGB is asked for",
          .enabled(if: Corpus.directory != nil))
    func cmykProfile() throws {
        let data = try Data(contentsOf: Corpus.directory!.appendingPathComponent("icc/branches-cmyk-profile.tif"))
        let stored = try coder.decode(data, options: .default)
        #expect(stored.colorProfile?.colorModel == .cmyk)
        var options = ImageDecodingOptions.default
        options.colorSpace = .sRGB
        let converted = try ImageCoderRegistry.shared.decode(data, options: options)
        #expect(converted.colorProfile == nil)
        #expect(converted.pixels != stored.pixels)
    }
}
