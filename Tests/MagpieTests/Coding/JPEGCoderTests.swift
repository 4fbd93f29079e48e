import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

struct JPEGCoderTests {
    let coder = JPEGCoder()

    private func encodedGradient(width: Int = 320, height: Int = 240, quality: Int = 90, progressive: Bool = false) throws -> Data {
        try coder.encode(Image(pixels: try TestImages.gradient(width: width, height: height)),
                         options: .init(quality: quality, progressive: progressive))
    }

    @Test func roundTripStaysCloseToTheSource() throws {
        let source = try TestImages.gradient(width: 320, height: 240)
        let data = try coder.encode(Image(pixels: source), options: .init(quality: 95))
        #expect(data.mg.imageFormat == .jpeg)
        let image = try coder.decode(data, options: .default)
        #expect(image.width == 320 && image.height == 240 && image.format == .jpeg)
        #expect(TestImages.meanError(image.pixels, source) < 2.5)
    }

    @Test func lowerQualityGivesSmallerFiles() throws {
        let photo = Image(pixels: try TestImages.gradient(width: 256, height: 256, alpha: false))
        let high = try coder.encode(photo, options: .init(quality: 95))
        let low = try coder.encode(photo, options: .init(quality: 20))
        #expect(low.count < high.count)
        #expect(throws: MagpieError.self) { try coder.encode(photo, options: .init(quality: 0)) }
    }

    @Test func progressiveEncodingIsReadBackAsProgressive() throws {
        let data = try encodedGradient(progressive: true)
        #expect(try coder.storedHeader(of: data).isProgressive)
        #expect(try coder.decode(data, options: .default).width == 320)
    }

    @Test func translucentPixelsAreFlattenedOverTheBackground() throws {
        let clear = try PixelBuffer(width: 16, height: 16, fill: .clear)
        let data = try coder.encode(Image(pixels: clear), options: .init(background: .white))
        let pixel = try coder.decode(data, options: .default).pixels[8, 8]
        #expect(pixel.red > 250 && pixel.green > 250 && pixel.blue > 250 && pixel.alpha == 255)
    }

    @Test func targetSizeUsesTheSmallestDCTScaleThatCovers() throws {
        let data = try encodedGradient(width: 1600, height: 1200)
        let thumb = try coder.decode(data, options: .init(targetSize: PixelSize(width: 256, height: 256)))
        // 1600x1200 fitted in 256x256 needs 256x192: the smallest N/8 covering that is 2/8 (400x300).
        #expect(thumb.width == 400 && thumb.height == 300)
        let fill = try coder.decode(data, options: .init(targetSize: PixelSize(width: 256, height: 256), contentMode: .aspectFill))
        #expect(fill.width >= 341 && fill.height >= 256)
        let none = try coder.decode(data, options: .init(targetSize: PixelSize(width: 4000, height: 4000)))
        #expect(none.width == 1600)
    }

    @Test func truncatedDataIsATruncationError() throws {
        let data = try encodedGradient()
        let reason = TestImages.decodingReason { try coder.decode(data.prefix(data.count / 2), options: .default) }
        #expect(reason?.isTruncated == true, "\(String(describing: reason))")
        let headerOnly = TestImages.decodingReason { try coder.decode(data.prefix(40), options: .default) }
        #expect(headerOnly?.isTruncated == true, "\(String(describing: headerOnly))")
    }

    @Test func damagedEntropyDataIsACorruptionError() throws {
        var data = try encodedGradient(width: 512, height: 512, quality: 95)
        // Overwrite the middle of the scan with marker-like garbage.
        let middle = data.count / 2
        for i in 0..<64 { data[middle + i] = i % 2 == 0 ? 0xFF : 0xD3 }
        let result = Result { try coder.decode(data, options: .default) }
        let reason = TestImages.decodingReason { try result.get() }
        #expect(reason?.isCorrupt == true, "\(String(describing: reason)) \(result)")
    }

    /// Rewrites the SOF0 segment's size fields (bytes after the precision byte).
    private func withDeclaredSize(_ data: Data, width: Int, height: Int, precision: UInt8? = nil) -> Data {
        var copy = data
        var i = 2
        while i + 9 < copy.count {
            if copy[i] == 0xFF && (copy[i + 1] == 0xC0 || copy[i + 1] == 0xC2) {
                if let precision { copy[i + 4] = precision }
                copy[i + 5] = UInt8(height >> 8); copy[i + 6] = UInt8(height & 0xFF)
                copy[i + 7] = UInt8(width >> 8); copy[i + 8] = UInt8(width & 0xFF)
                return copy
            }
            i += 2 + (Int(copy[i + 2]) << 8 | Int(copy[i + 3]))
        }
        return copy
    }

    @Test func hugeDeclaredDimensionsAreRefusedBeforeDecoding() throws {
        let bomb = withDeclaredSize(try encodedGradient(), width: 60000, height: 60000)
        let reason = TestImages.decodingReason { try coder.decode(bomb, options: .default) }
        #expect(reason?.isTooLarge == true, "\(String(describing: reason))")
        let small = ImageDecodingOptions(limits: .init(maxPixelsPerFrame: 1000))
        #expect(TestImages.decodingReason { try coder.decode(try encodedGradient(), options: small) }?.isTooLarge == true)
    }

    @Test func twelveBitJPEGIsUnsupported() throws {
        let twelve = withDeclaredSize(try encodedGradient(), width: 320, height: 240, precision: 12)
        let reason = TestImages.decodingReason { try coder.decode(twelve, options: .default) }
        #expect(reason?.isUnsupported == true, "\(String(describing: reason))")
    }
}

extension JPEGCoderTests {
    /// At 1/8 scale a progressive JPEG is decoded from its DC scans only; each output
    /// pixel is then the mean of an 8x8 block, which a box average of the full decode shows.
    @Test func progressiveEighthScaleDecodeMatchesBlockAverages() throws {
        let data = try encodedGradient(width: 1600, height: 1200, quality: 92, progressive: true)
        let thumb = try coder.decode(data, options: .init(targetSize: PixelSize(width: 150, height: 150)))
        #expect(thumb.width == 200 && thumb.height == 150)
        let full = try coder.decode(data, options: .default)
        let averaged = try BoxReducer.reduce(full.pixels, factorX: 8, factorY: 8)
        #expect(TestImages.meanError(thumb.pixels, averaged) < 2.0)
    }

    @Test func truncatedProgressiveFileIsAnErrorEvenForThumbnails() throws {
        let data = try encodedGradient(width: 1600, height: 1200, quality: 92, progressive: true)
        let cut = data.prefix(data.count - 200)  // inside the last (AC refinement) scan
        let reason = TestImages.decodingReason {
            try coder.decode(cut, options: .init(targetSize: PixelSize(width: 150, height: 150)))
        }
        #expect(reason?.isTruncated == true, "\(String(describing: reason))")
    }
}

/// Regression tests for findings of the codec safety review.
extension JPEGCoderTests {
    /// The byte ranges of every SOS segment plus its entropy-coded data, in file order.
    private func scans(of data: Data) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var i = 2
        while i + 4 <= data.count, data[i] == 0xFF {
            let marker = data[i + 1]
            if marker == 0xD9 { break }
            var end = i + 2 + (Int(data[i + 2]) << 8 | Int(data[i + 3]))
            if marker == 0xDA {
                while end + 1 < data.count && !(data[end] == 0xFF && data[end + 1] != 0 && !(0xD0...0xD7).contains(data[end + 1])) {
                    end += 1
                }
                result.append(i..<end)
            }
            i = end
        }
        return result
    }

    @Test func repeatedProgressiveScansAreRejectedAsCorrupt() throws {
        let data = try encodedGradient(width: 256, height: 256, quality: 90, progressive: true)
        let last = try #require(scans(of: data).last)
        var padded = Data(data[..<last.upperBound])
        for _ in 0..<40 { padded.append(data[last]) }  // the same refinement scan again and again
        padded.append(contentsOf: [0xFF, 0xD9])
        let reason = TestImages.decodingReason { try coder.decode(padded, options: .default) }
        #expect(reason?.isCorrupt == true, "\(String(describing: reason))")
    }

    @Test func bareScanMarkerAtTheEndIsATypedErrorForThumbnails() throws {
        let data = try encodedGradient(width: 1600, height: 1200, quality: 90, progressive: true)
        let first = try #require(scans(of: data).first)
        let cut = Data(data[..<first.upperBound]) + Data([0xFF, 0xDA, 0x00, 0x00])
        let reason = TestImages.decodingReason {
            try coder.decode(cut, options: .init(targetSize: PixelSize(width: 100, height: 100)))
        }
        #expect(reason != nil, "a stream ending in a bare SOS must not decode")
    }

    @Test func nonPositiveLimitsRefuseRatherThanDisableTheCheck() throws {
        let data = try encodedGradient(width: 64, height: 64)
        for limits in [ImageDecodingLimits(maxPixelsPerFrame: 0), ImageDecodingLimits(maxTotalBytes: -1)] {
            let reason = TestImages.decodingReason { try coder.decode(data, options: .init(limits: limits)) }
            #expect(reason?.isTooLarge == true, "\(limits): \(String(describing: reason))")
        }
    }
}
