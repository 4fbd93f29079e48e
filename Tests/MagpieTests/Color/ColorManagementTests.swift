import Foundation
import Testing

@testable import MagpieCore

/// Colour profiles read, kept through processing and encoding, and converted to sRGB on request.
struct ColorManagementTests {
    let registry = ImageCoderRegistry.shared

    static let corpus = Corpus.directory
    static func corpusFile(_ path: String) throws -> Data {
        try Data(contentsOf: corpus!.appendingPathComponent(path))
    }

    /// A flat 16×16 image of one colour, tagged with `profile`.
    func swatch(_ color: RGBAColor, profile: ColorProfile?) throws -> Image {
        var image = Image(pixels: try PixelBuffer(width: 16, height: 16, fill: color))
        image.colorProfile = profile
        return image
    }

    static let displayP3 = ColorProfile(
        cicp: CICP(colorPrimaries: 12, transferCharacteristics: 13, matrixCoefficients: 0, fullRange: true))

    @Test func displayP3CICPConvertsTowardsSaturatedSRGBAndKeepsGrayAndAlpha() throws {
        let orange = try swatch(RGBAColor(red: 200, green: 100, blue: 50, alpha: 77), profile: Self.displayP3)
        let converted = ColorConverter.convertedToSRGB(orange)
        let pixel = converted.pixels[3, 3]
        // P3's primaries are wider: the same numbers mean a more saturated colour, so sRGB needs more red, less green.
        #expect(pixel.red > 205 && pixel.green < 100 && pixel.alpha == 77, "\(pixel)")
        #expect(converted.colorProfile == nil)
        let gray = ColorConverter.convertedToSRGB(try swatch(RGBAColor(red: 128, green: 128, blue: 128), profile: Self.displayP3))
        let g = gray.pixels[0, 0]
        #expect(abs(Int(g.red) - 128) <= 1 && abs(Int(g.green) - 128) <= 1 && abs(Int(g.blue) - 128) <= 1, "\(g)")
    }

    @Test func sRGBAndUnspecifiedCICPAreLeftAloneAndHDRIsNotToneMapped() throws {
        let color = RGBAColor(red: 10, green: 200, blue: 90)
        for cicp in [CICP.sRGB, CICP(colorPrimaries: 2, transferCharacteristics: 2, matrixCoefficients: 6, fullRange: true)] {
            let converted = ColorConverter.convertedToSRGB(try swatch(color, profile: ColorProfile(cicp: cicp)))
            #expect(converted.pixels[0, 0] == color && converted.colorProfile == nil)
        }
        let pq = ColorProfile(cicp: CICP(colorPrimaries: 9, transferCharacteristics: 16, matrixCoefficients: 9, fullRange: true))
        #expect(pq.cicp?.isHDR == true && pq.name == "BT.2020 PQ")
        let kept = ColorConverter.convertedToSRGB(try swatch(color, profile: pq))
        #expect(kept.pixels[0, 0] == color && kept.colorProfile == pq)
    }

    @Test func aCICPProfileIsEmbeddedAsAnICCProfileThatDecodesToTheSameColours() throws {
        let image = try swatch(RGBAColor(red: 200, green: 100, blue: 50), profile: Self.displayP3)
        let png = try registry.encode(image, as: .png)
        let decoded = try registry.decode(png)
        let icc = try #require(decoded.colorProfile?.iccData)
        #expect(ColorProfile(iccData: icc).colorModel == .rgb)
        let viaICC = ColorConverter.convertedToSRGB(decoded).pixels[0, 0]
        let viaCICP = ColorConverter.convertedToSRGB(image).pixels[0, 0]
        #expect(abs(Int(viaICC.red) - Int(viaCICP.red)) <= 1 && abs(Int(viaICC.green) - Int(viaCICP.green)) <= 1)
    }

    @Test func encodersWithoutProfileSupportGetSRGBPixels() throws {
        let image = try swatch(RGBAColor(red: 200, green: 100, blue: 50), profile: Self.displayP3)
        let gif = try registry.decode(try registry.encode(image, as: .gif))
        #expect(gif.colorProfile == nil)
        let expected = ColorConverter.convertedToSRGB(image).pixels[0, 0]
        let actual = gif.pixels[0, 0]
        #expect(abs(Int(actual.red) - Int(expected.red)) <= 8 && abs(Int(actual.green) - Int(expected.green)) <= 8, "\(actual)")
    }

    @Test func strippingConvertsToSRGBAndWritesNoProfile() throws {
        let image = try swatch(RGBAColor(red: 200, green: 100, blue: 50), profile: Self.displayP3)
        var options = ImageEncodingOptions.default
        options.metadata = .strip
        options.lossless = true
        let stripped = try registry.decode(try registry.encode(image, as: .webp, options: options))
        #expect(stripped.colorProfile == nil)
        #expect(stripped.pixels == ColorConverter.convertedToSRGB(image).pixels)
    }

    @Test("the matrix-shaper fast path agrees with lcms2 within 1 on every channel", arguments: [
        "icc/tower-displayp3.jpg", "icc/branches-prophoto.jpg", "icc/tower-adobergb.png", "jpeg/xmp_test.jpg",
    ])
    func matrixShaperFastPathMatchesLCMS(_ path: String) throws {
        guard Self.corpus != nil else { return }
        let stored = try registry.decode(try Self.corpusFile(path))
        #expect(stored.colorProfile?.iccData != nil)
        // Every 8-bit value on each channel, in shuffled combinations, plus the file's own pixels.
        var noise = try PixelBuffer(width: 256, height: 64)
        for y in 0..<64 {
            for x in 0..<256 {
                noise[x, y] = RGBAColor(red: UInt8(x), green: UInt8((x * 7 + y * 31) & 255), blue: UInt8((x * 13 + y * 5) & 255), alpha: UInt8(y * 4))
            }
        }
        // Past a million pixels the conversion runs in two halves; an odd count leaves a tail for the scalar loop
        // after the eight-pixel SIMD one.
        let noiseBytes = noise.rgbaBytes
        let tiled = try PixelBuffer(width: 1031, height: 1025, rgba: (0..<1031 * 1025 * 4).map { noiseBytes[$0 % noiseBytes.count] })
        for pixels in [stored.pixels, noise, tiled] {
            var image = Image(pixels: pixels)
            image.colorProfile = stored.colorProfile
            let fast = ColorConverter.convertedToSRGB(image).pixels.rgbaBytes
            var exactImage = image
            ColorConverter.convertToSRGB(&exactImage, exactLCMS: true)
            let exact = exactImage.pixels.rgbaBytes
            let worst = zip(fast, exact).map { abs(Int($0) - Int($1)) }.max() ?? 99
            #expect(worst <= 1, "\(path): fast path differs from lcms2 by \(worst)")
        }
    }

    @Test func impossibleChromaticitiesAreLeftAsStoredInsteadOfConverted() throws {
        // A cHRM white point with y = 0 makes lcms2 divide by zero: such a space is refused, never evaluated.
        let broken = Chromaticities(whiteX: 0.3127, whiteY: 0, redX: 0.64, redY: 0.33, greenX: 0.3, greenY: 0.6, blueX: 0.15, blueY: 0.06)
        let image = try swatch(RGBAColor(red: 10, green: 20, blue: 30), profile: ColorProfile(gamma: 0.45455, chromaticities: broken))
        let converted = ColorConverter.convertedToSRGB(image)
        #expect(converted.pixels == image.pixels && converted.colorProfile == image.colorProfile)
        // Through a real PNG too: gAMA + that cHRM, decoded to sRGB.
        var png = try registry.encode(Image(pixels: image.pixels), as: .png)
        var chunks = Data()
        var gama = Data()
        PNGChunks.appendUInt32(45455, to: &gama)
        PNGChunks.write("gAMA", gama, to: &chunks)
        var chrm = Data()
        for v in [31270, 0, 64000, 33000, 30000, 60000, 15000, 6000] { PNGChunks.appendUInt32(UInt32(v), to: &chrm) }
        PNGChunks.write("cHRM", chrm, to: &chunks)
        png.insert(contentsOf: chunks, at: 33)
        var options = ImageDecodingOptions.default
        options.colorSpace = .sRGB
        #expect(try registry.decode(png, options: options).pixels == image.pixels)
    }

    @Test func onlyTheFirstICCPChunkIsRead() throws {
        let image = try swatch(RGBAColor(red: 200, green: 100, blue: 50), profile: Self.displayP3)
        let png = try registry.encode(image, as: .png)
        let chunks = PNGChunks.read(png).chunks
        let iccp = try #require(chunks.first { $0.type == "iCCP" })
        var second = Data()
        // A second iCCP naming another (bogus) profile: ignored, the first one stands.
        var payload = Data("icc\0".utf8)
        payload.append(0)
        payload.append(contentsOf: [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
        PNGChunks.write("iCCP", payload, to: &second)
        var doubled = png
        let afterFirst = try #require(doubled.range(of: iccp.data)).upperBound + 4
        doubled.insert(contentsOf: second, at: afterFirst)
        let decoded = try registry.decode(doubled)
        #expect(decoded.colorProfile?.iccData == (try registry.decode(png)).colorProfile?.iccData)
    }

    @Test func aJPEGProfileIsUsedOnlyWhenEverySegmentAnnouncedIsPresent() throws {
        // 70,000 bytes of profile: two APP2 segments, numbered 1 and 2 of 2.
        let icc = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let plain = try registry.encode(try swatch(RGBAColor(red: 9, green: 9, blue: 9), profile: nil), as: .jpeg)
        let jpeg = JPEGSegments.inserting(icc: icc, exif: nil, xmp: nil, into: plain)
        #expect(JPEGSegments.read(jpeg).colorProfile?.iccData == icc)
        let header = Data("ICC_PROFILE\0".utf8)
        var announcedThree = jpeg
        for range in announcedThree.ranges(of: header) {
            announcedThree[range.upperBound + 1] = 3
        }
        #expect(announcedThree.ranges(of: header).count == 2)
        #expect(JPEGSegments.read(announcedThree).colorProfile == nil)
        var disagreeing = jpeg
        let second = try #require(disagreeing.ranges(of: header).last)
        disagreeing[second.upperBound + 1] = 1
        #expect(JPEGSegments.read(disagreeing).colorProfile == nil)
    }

    @Test func aGIFWithThousandsOfXMPBlocksIsReadOnce() throws {
        var gif = try registry.encode(try swatch(RGBAColor(red: 1, green: 2, blue: 3), profile: nil), as: .gif)
        // 20,000 empty "XMP DataXMP" application extensions before the trailer: each one used to copy and scan the
        // rest of the file (quadratic); now only the first is looked at.
        var block = Data([0x21, 0xFF, 11])
        block.append(contentsOf: Array("XMP DataXMP".utf8))
        block.append(0)
        var blocks = Data()
        for _ in 0..<20_000 { blocks.append(block) }
        gif.insert(contentsOf: blocks, at: gif.count - 1)
        let decoded = try registry.decode(gif)
        #expect(decoded.metadata.xmp == nil && decoded.width == 16)
    }

    @Test func anSRGBDecodeIsADifferentCacheVariantFromTheStoredColours() {
        var options = ImageDecodingOptions.default
        #expect(options.variantIdentifier == "")
        options.colorSpace = .sRGB
        #expect(options.variantIdentifier == "srgb")
    }

    // MARK: - Metadata

    /// A big-endian EXIF payload with Orientation 6 and a GPS IFD pointer (to an empty GPS IFD).
    static let exifWithGPS: Data = {
        var b: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8]  // header, IFD0 at 8
        b += [0, 2]  // two entries
        b += [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0]  // Orientation SHORT 6
        b += [0x88, 0x25, 0, 4, 0, 0, 0, 1, 0, 0, 0, 38]  // GPSInfo LONG -> 38
        b += [0, 0, 0, 0]  // no next IFD
        b += [0, 0, 0, 0, 0, 0]  // GPS IFD: no entries, no next
        return Data(b)
    }()

    /// A big-endian EXIF payload with Orientation 6, Artist, Copyright and a GPS IFD pointer (to an empty GPS IFD).
    static let exifWithCopyright: Data = {
        let artist = Array("Ann Example\0".utf8)  // 12 bytes, at 62
        let copyright = Array("(c) 2026 Ann Example\0".utf8)  // 21 bytes, at 74 (one pad byte after)
        var b: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8]
        b += [0, 4]
        b += [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0]  // Orientation SHORT 6
        b += [0x01, 0x3B, 0, 2, 0, 0, 0, UInt8(artist.count), 0, 0, 0, 62]  // Artist ASCII
        b += [0x82, 0x98, 0, 2, 0, 0, 0, UInt8(copyright.count), 0, 0, 0, 74]  // Copyright ASCII
        b += [0x88, 0x25, 0, 4, 0, 0, 0, 1, 0, 0, 0, 96]  // GPSInfo LONG -> 96
        b += [0, 0, 0, 0]
        b += artist + copyright + [0]
        b += [0, 0, 0, 0, 0, 0]
        return Data(b)
    }()

    @Test("keepsCopyright writes the source EXIF's artist and copyright in an EXIF of their own, nothing else",
          arguments: [ImageFormat.jpeg, .png, .webp, .avif, .jxl])
    func copyrightAloneIsWrittenWhenAsked(_ format: ImageFormat) throws {
        var image = try swatch(RGBAColor(red: 1, green: 2, blue: 3), profile: nil)
        image.metadata = ImageMetadata(exif: Self.exifWithCopyright, xmp: Data("<x:xmpmeta/>".utf8))
        var options = ImageEncodingOptions.default
        options.keepsCopyright = true
        let decoded = try registry.decode(try registry.encode(image, as: format, options: options))
        #expect(decoded.metadataKinds == [.exif], "no GPS, no XMP")
        let exif = try #require(decoded.metadata.exif)
        let fields = try #require(IFDReader(exif))
        #expect(fields.asciiValue(tag: 0x013B) == Array("Ann Example\0".utf8))
        #expect(fields.asciiValue(tag: 0x8298) == Array("(c) 2026 Ann Example\0".utf8))
        #expect(fields.ifd0Entry(tag: 0x0112) == nil && fields.ifd0Entry(tag: 0x8825) == nil)

        // Stripping writes nothing, and a source without either field gets no EXIF at all.
        options.metadata = .strip
        #expect(try registry.decode(try registry.encode(image, as: format, options: options)).metadataKinds.isEmpty)
        options.metadata = .none
        image.metadata = ImageMetadata(exif: Self.exifWithGPS)
        #expect(try registry.decode(try registry.encode(image, as: format, options: options)).metadata.exif == nil)
    }

    @Test("a hostile EXIF gives no copyright block rather than reading past its end")
    func truncatedCopyrightFieldsAreDropped() {
        var truncated = [UInt8](Self.exifWithCopyright.prefix(80))  // the copyright text cut short
        #expect(EXIFData.keepingOnlyCopyright(Data(truncated)).map { IFDReader($0)?.asciiValue(tag: 0x8298) } == .some(nil))
        truncated[4...7] = [0xFF, 0xFF, 0xFF, 0xF0]  // IFD0 far past the end
        #expect(EXIFData.keepingOnlyCopyright(Data(truncated)) == nil)
        #expect(EXIFData.keepingOnlyCopyright(Data([0x49, 0x49, 42])) == nil)
    }

    @Test("EXIF (and its GPS) is written only when asked, with the orientation reset",
          arguments: [ImageFormat.jpeg, .png, .webp, .avif, .jxl])
    func exifIsWrittenOnlyWhenKept(_ format: ImageFormat) throws {
        var image = try swatch(RGBAColor(red: 1, green: 2, blue: 3), profile: nil)
        image.metadata = ImageMetadata(exif: Self.exifWithGPS, xmp: Data("<x:xmpmeta/>".utf8))
        let dropped = try registry.decode(try registry.encode(image, as: format))
        #expect(dropped.metadata == .none && dropped.metadataKinds.isEmpty)

        var keep = ImageEncodingOptions.default
        keep.metadata = .keep
        let kept = try registry.decode(try registry.encode(image, as: format, options: keep))
        #expect(kept.metadataKinds == [.exif, .gps, .xmp])
        #expect(ImageOrientation(exifPayload: try #require(kept.metadata.exif)) == .up)
        #expect(kept.metadata.xmp == Data("<x:xmpmeta/>".utf8))
    }

    // MARK: - Corpus files

    @Test(.enabled(if: corpus != nil, "../shared/corpus is absent"))
    func aDisplayP3JPEGKeepsItsProfileThroughWebPAndPNGAndConvertsOnRequest() throws {
        let data = try Self.corpusFile("icc/tower-displayp3.jpg")
        let stored = try registry.decode(data)
        let profile = try #require(stored.colorProfile)
        #expect(profile.name == "Display P3" && stored.metadataKinds.contains(.icc))
        for format in [ImageFormat.webp, .png] {
            let again = try registry.decode(try registry.encode(stored, as: format))
            #expect(again.colorProfile?.iccData == profile.iccData, "\(format)")
        }
        var options = ImageDecodingOptions.default
        options.colorSpace = .sRGB
        let converted = try registry.decode(data, options: options)
        #expect(converted.colorProfile == nil && converted.pixels != stored.pixels)
    }

    @Test(.enabled(if: corpus != nil, "../shared/corpus is absent"))
    func aCMYKJPEGWithAProfileConvertsThroughItOnlyWhenSRGBIsAsked() throws {
        let data = try Self.corpusFile("icc/tower-cmyk-profile.jpg")
        let stored = try registry.decode(data)
        #expect(stored.colorProfile?.colorModel == .cmyk)
        var options = ImageDecodingOptions.default
        options.colorSpace = .sRGB
        let converted = try registry.decode(data, options: options)
        #expect(converted.colorProfile == nil && converted.pixels != stored.pixels)
        // A CMYK profile cannot describe the RGB a JPEG encoder writes: it is not embedded.
        #expect(try registry.decode(try registry.encode(stored, as: .jpeg)).colorProfile == nil)
    }

    @Test(.enabled(if: corpus != nil, "../shared/corpus is absent"))
    func pngGammaAndChromaticitiesAndGIFProfilesAreRead() throws {
        let png = try registry.decode(try Self.corpusFile("icc/branches-gama-chrm-adobe.png"))
        #expect(png.colorProfile?.gamma != nil && png.colorProfile?.chromaticities != nil)
        let srgbChunk = try registry.decode(try Self.corpusFile("icc/tux-srgb-chunk.png"))
        #expect(srgbChunk.colorProfile?.isSRGB == true && srgbChunk.colorProfile?.name == "sRGB")
        let gif = try registry.decode(try Self.corpusFile("gif-test-suite/icc-color-profile.gif"))
        #expect(gif.colorProfile?.iccData != nil)
    }
}
