import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// Every row of the shared corpus's REFERENCE.tsv and REFERENCE-FORMATS.tsv, decoded with the built-in coders, and
/// every COLOUR.tsv row converted to sRGB. Skips when the corpus folder is absent.
@Suite("Corpus conformance", .enabled(if: Corpus.directory != nil, "../shared/corpus is absent"))
struct CorpusConformanceTests {
    @Test("each corpus file decodes or fails as REFERENCE.tsv says", arguments: Corpus.rows)
    func fileMatchesReference(_ row: Corpus.Row) throws {
        let data = try Data(contentsOf: row.url)
        let result = Result { try ImageCoderRegistry.shared.decode(data) }
        let errorAcceptable = row.notes.contains("[error-acceptable]")
        let decodeAcceptable = row.notes.contains("[decode-acceptable]")
        switch (row.expect, result) {
        case ("decode", .success(let image)):
            checkDecoded(image, row)
        case ("decode", .failure(let error)):
            #expect(errorAcceptable && error is MagpieError, "\(row.path): expected an image, got \(error)")
        case ("error", .success(let image)):
            #expect(decodeAcceptable, "\(row.path): expected an error, decoded \(image.width)x\(image.height)")
        case ("error", .failure(let error)):
            #expect(error is MagpieError, "\(row.path): untyped error \(error)")
        case ("unsupported", .success):
            Issue.record("\(row.path): expected unsupported format, but it decoded")
        case ("unsupported", .failure(let error)):
            let isUnsupported = if case .decodingFailed(.unsupportedFormat) = error as? MagpieError { true } else { false }
            #expect(isUnsupported, "\(row.path): expected unsupportedFormat, got \(error)")
            #expect("\(error)".contains("unsupported format"))
        default:
            Issue.record("\(row.path): unknown expectation \(row.expect)")
        }
    }

    @Test("each colour-managed corpus file converted to sRGB matches COLOUR.tsv within 3", arguments: Corpus.colourRows)
    func fileConvertsToSRGB(_ row: Corpus.ColourRow) throws {
        let data = try Data(contentsOf: row.url)
        var options = ImageDecodingOptions.default
        options.colorSpace = .sRGB
        let image: Image
        do {
            image = try ImageCoderRegistry.shared.decode(data, options: options)
        } catch {
            // The reference row allows an error for this file (checked by the test above); nothing to compare.
            let reference = Corpus.rows.first { $0.path == row.path }
            #expect(reference?.notes.contains("[error-acceptable]") == true, "\(row.path): \(error)")
            return
        }
        let grid = PixelDigest.grid8(image.pixels)
        let worst = zip(grid, PixelDigest.parseGrid(row.srgbGrid8)).map { abs($0 - $1) }.max() ?? 0
        #expect(worst <= 3, "\(row.path) (\(row.description)): sRGB grid8 differs by up to \(worst)")
    }

    /// Rows whose reference pixels contradict the corpus README's own rule for their format. Such a row must still
    /// decode at its size and frame count; its pixels are pinned against the rule in the format's own tests.
    static let referenceContradictsRule: [String: String] = [
        "bmp/q/rgba16-4444.bmp": "the hash is ImageMagick 6.9.11's bit-field scaling (4-bit alpha 15 becomes 240), "
            + "not the README's round(v*255/(2^n-1)), which gives 255 (BMPCoderTests pins the rule)",
        "bmp/q/rgb32-111110.bmp": "the hash is ImageMagick 6.9.11's scaling of 11- and 10-bit fields, not the README's rule",
    ]

    private func checkDecoded(_ image: Image, _ row: Corpus.Row) {
        #expect(image.width == row.width && image.height == row.height,
                "\(row.path): size \(image.width)x\(image.height), expected \(row.width ?? -1)x\(row.height ?? -1)")
        if let frames = row.frames {
            #expect(image.frames.count == frames, "\(row.path): \(image.frames.count) frames, expected \(frames)")
        }
        if image.frames.count > 1 {
            if !row.loopCount.isEmpty {
                let loop = image.loopCount.map(String.init) ?? "none"
                #expect(loop == row.loopCount, "\(row.path): loop \(loop), expected \(row.loopCount)")
            }
            if !row.delays.isEmpty {
                let delays = image.frames.map { frame -> String in
                    let (s, atto) = frame.duration.components
                    return String(Int64((Double(s) * 1000 + Double(atto) / 1e15).rounded()))
                }.joined(separator: ",")
                #expect(delays == row.delays, "\(row.path): delays \(delays), expected \(row.delays)")
            }
        }
        guard image.width == row.width, image.height == row.height,
            Self.referenceContradictsRule[row.path] == nil
        else { return }
        if row.lossless, !row.sha256.isEmpty {
            #expect(PixelDigest.sha256(image.pixels) == row.sha256, "\(row.path): first-frame pixels differ")
        } else if !row.lossless, !row.grid8.isEmpty {
            let grid = PixelDigest.grid8(image.pixels)
            let expected = PixelDigest.parseGrid(row.grid8)
            let worst = zip(grid, expected).map { abs($0 - $1) }.max() ?? 0
            #expect(worst <= 3, "\(row.path): grid8 differs by up to \(worst)")
        }
    }
}
