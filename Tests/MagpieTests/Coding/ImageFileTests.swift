import CImageCodecs
import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// Decoding from a file by path (`ImageCoderRegistry.decode(contentsOfFile:)`, `ImageFile`): the JPEG coder reads
/// the file as it decodes, in 64 KiB windows, and must give what decoding the file's bytes gives — the same pixels and
/// metadata, or the same kind of error — on libjpeg's path and on the 1/8 decoder's one and two threads.
///
/// One difference is libjpeg-turbo's, for damaged data only: its fast Huffman decoder, which runs while a whole MCU's
/// worth of input is buffered (always, for bytes in memory), turns a code no table has into zero without a word; its
/// slow one, near the end of a buffer (a file read 64 KiB at a time, as djpeg reads), warns "bad Huffman code". So a
/// damaged file may fail as corrupt where its bytes decode to garbage, and never the other way round.
struct ImageFileTests {
    typealias Path = JPEGDecodePath

    /// A folder of its own, removed when the test ends.
    private final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-image-file-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        func write(_ data: Data, as name: String = "image.jpg") throws -> String {
            let file = url.appendingPathComponent(name)
            try data.write(to: file)
            return file.path
        }
    }

    private func decode(_ data: Data, _ path: Path, minimum: UInt32 = 1) -> Path.Outcome {
        path.decode(data, minimum: minimum)
    }

    private func decode(_ file: ImageFile, _ path: Path, minimum: UInt32 = 1) -> Path.Outcome {
        path.decode(file, minimum: minimum)
    }

    private func decodeFile(_ data: Data, in folder: Folder, _ path: Path, minimum: UInt32 = 1) throws -> Path.Outcome {
        try decode(ImageFile(path: folder.write(data)), path, minimum: minimum)
    }

    // MARK: The C decoder on a file

    @Test(arguments: Path.allCases)
    func aLargeFileGivesTheSamePixelsAsItsBytesAtEveryScale(_ path: Path) throws {
        let folder = try Folder()
        let data = try TestImages.noisyPhotoJPEG()
        #expect(data.count > 8 * 64 * 1024)  // many windows
        for minimum: UInt32 in [1, 300, 700, 0] {
            let reference = decode(data, path, minimum: minimum)
            #expect(reference.status == 0)
            #expect(try decodeFile(data, in: folder, path, minimum: minimum) == reference, "minimum \(minimum)")
        }
    }

    @Test func twoThreadsSplitTheScanOfALargeFile() throws {
        let folder = try Folder()
        let file = try ImageFile(path: folder.write(TestImages.noisyPhotoJPEG()))
        let before = mg_jpeg_eighth_split_count()
        #expect(decode(file, .twoThreads).status == 0)
        #expect(mg_jpeg_eighth_split_count() > before)
    }

    @Test func aFileWithASecondImageAfterItsEndDecodesAsItsBytes() throws {
        let folder = try Folder()
        let data = try TestImages.noisyPhotoJPEG()
        let withSecond = data + data
        for path in Path.allCases {
            #expect(try decodeFile(withSecond, in: folder, path) == decode(withSecond, path))
        }
    }

    @Test func aProgressiveFileAtAnEighthGivesTheSamePixelsAsItsBytes() throws {
        let folder = try Folder()
        let pixels = try TestImages.gradient(width: 1024, height: 768)
        let data = try JPEGCoder().encode(Image(pixels: pixels), options: .init(quality: 90, progressive: true))
        let reference = decode(data, .twoThreads)
        #expect(reference.status == 0 && reference.width == 128)
        #expect(try decodeFile(data, in: folder, .twoThreads) == reference)
    }

    @Test func aCutFileFailsAsItsBytesDo() throws {
        let folder = try Folder()
        let data = try TestImages.noisyPhotoJPEG()
        for keep in [100, data.count / 3, data.count / 2 + 17, data.count - 2, data.count - 700] {
            let cut = data.prefix(keep)
            for path in Path.allCases {
                let reference = decode(cut, path)
                #expect(reference.status != 0, "cut at \(keep)")
                #expect(try decodeFile(cut, in: folder, path) == reference, "cut at \(keep), \(path)")
            }
        }
    }

    /// Flipped bits either still decode (to exactly what the bytes decode to) or fail: as the bytes do, or as corrupt
    /// data (a bad Huffman code, see the type's comment).
    @Test func aDamagedFileGivesWhatItsBytesGiveOrIsCorrupt() throws {
        let folder = try Folder()
        let data = try TestImages.noisyPhotoJPEG(width: 1024, height: 768)
        for damaged in TestImages.bitFlipped(data, count: 20, seed: 7) {
            let fromFile = try decodeFile(damaged, in: folder, .twoThreads), fromBytes = decode(damaged, .twoThreads)
            #expect(fromFile == fromBytes || fromFile.status == Int32(MG_ERR_CORRUPT.rawValue))
        }
    }

    /// The file's size is taken when it is opened; a file cut after that ends early, which is a truncated image, not
    /// pixels made of whatever a failed read left.
    @Test(arguments: [UInt32(1), 0], [false, true])
    func aFileCutAfterItWasOpenedIsTruncated(_ minimum: UInt32, progressive: Bool) throws {
        let folder = try Folder()
        let data = progressive
            ? try JPEGCoder().encode(Image(pixels: TestImages.gradient(width: 1024, height: 768)),
                                     options: .init(quality: 90, progressive: true))
            : try TestImages.noisyPhotoJPEG()
        let path = try folder.write(data)
        let file = try ImageFile(path: path)
        #expect(truncate(path, off_t(file.size / 2)) == 0)
        #expect(decode(file, .twoThreads, minimum: minimum).status == Int32(MG_ERR_TRUNCATED.rawValue))
    }

    // MARK: The registry and the JPEG coder

    @Test func aHeaderLongerThanTheLeadingBytesIsReadOnToTheScan() throws {
        let folder = try Folder()
        // An ICC profile of 200 KB takes four APP2 segments: the header ends far past the first 64 KiB.
        var profile = Data(count: 200_000)
        for i in 0..<profile.count { profile[i] = UInt8(truncatingIfNeeded: i &* 31) }
        let plain = try JPEGCoder().encode(Image(pixels: TestImages.gradient(width: 640, height: 480)), options: .init())
        let data = JPEGSegments.inserting(icc: profile, exif: nil, xmp: nil, into: plain)
        guard case .complete(let headerBytes) = JPEGSegments.headerExtent(of: data) else {
            Issue.record("no header extent")
            return
        }
        #expect(headerBytes > ImageFile.leadingByteCount)
        let options = ImageDecodingOptions(targetSize: PixelSize(width: 80, height: 60))
        let fromFile = try ImageCoderRegistry.shared.decode(contentsOfFile: folder.write(data), options: options)
        let fromBytes = try ImageCoderRegistry.shared.decode(data, options: options)
        #expect(fromFile.colorProfile?.iccData == profile)
        #expect(fromFile.colorProfile == fromBytes.colorProfile)
        #expect(PixelDigest.sha256(fromFile.pixels) == PixelDigest.sha256(fromBytes.pixels))
    }

    @Test func theHeaderWalkSaysWhereTheScanStartsOrWhatIsMissing() throws {
        let data = try JPEGCoder().encode(Image(pixels: TestImages.gradient(width: 64, height: 64)), options: .init())
        guard case .complete(let count) = JPEGSegments.headerExtent(of: data) else {
            Issue.record("no header extent")
            return
        }
        #expect(count > 20 && count < data.count)
        #expect(try JPEGCoder().storedHeader(of: data.prefix(count)).width == 64)  // all libjpeg reads before the scan
        #expect(JPEGSegments.headerExtent(of: data.prefix(count - 1)) == .needsBytes(count: count))
        #expect(JPEGSegments.headerExtent(of: data.prefix(1)) == .needsBytes(count: 2))
        #expect(JPEGSegments.headerExtent(of: Data("not a jpeg".utf8)) == .malformed)
        #expect(JPEGSegments.headerExtent(of: Data([0xFF, 0xD8, 0xFF, 0xD9, 0, 0])) == .malformed)
    }

    @Test(arguments: Corpus.rows.filter { $0.format == "JPEG" })
    func everyCorpusJPEGDecodesFromItsPathAsFromItsBytes(_ row: Corpus.Row) throws {
        let data = try Data(contentsOf: row.url)
        for options in [ImageDecodingOptions.default, ImageDecodingOptions(targetSize: PixelSize(width: 48, height: 48))] {
            let fromBytes = Result { try ImageCoderRegistry.shared.decode(data, options: options) }
            let fromFile = Result { try ImageCoderRegistry.shared.decode(contentsOfFile: row.url.path, options: options) }
            switch (fromBytes, fromFile) {
            case (.success(let expected), .success(let image)):
                #expect(PixelDigest.sha256(image.pixels) == PixelDigest.sha256(expected.pixels))
                #expect(image.colorProfile == expected.colorProfile)
                #expect(image.metadata == expected.metadata)
            case (.failure(let expected), .failure(let error)):
                let kind = (error as? MagpieError)?.decodingReason?.kind
                #expect(kind == (expected as? MagpieError)?.decodingReason?.kind || kind == "corrupt", "\(error) / \(expected)")
            case (.success, .failure(let error)):
                // A bad Huffman code that libjpeg-turbo's fast decoder passes over (see the type's comment).
                #expect((error as? MagpieError)?.decodingReason?.kind == "corrupt", "\(error)")
            case (.failure, .success):
                Issue.record("bytes: \(fromBytes), file: \(fromFile)")
            }
        }
    }

    @Test func otherFormatsAreReadWholeAndDecodeAsTheirBytes() throws {
        let folder = try Folder()
        let image = Image(pixels: try TestImages.gradient(width: 300, height: 200, alpha: true))
        for format in [ImageFormat.png, .webp, .gif] {
            let data = try ImageCoderRegistry.shared.encode(image, as: format, options: .init(quality: 90))
            let path = try folder.write(data, as: "image.\(format.rawValue)")
            let fromFile = try ImageCoderRegistry.shared.decode(contentsOfFile: path)
            let fromBytes = try ImageCoderRegistry.shared.decode(data)
            #expect(PixelDigest.sha256(fromFile.pixels) == PixelDigest.sha256(fromBytes.pixels), "\(format)")
        }
    }

    @Test func aMissingFileADirectoryAFIFOAnEmptyFileAndTextFailWithTheirReasons() throws {
        let folder = try Folder()
        let missing = folder.url.appendingPathComponent("missing.jpg").path
        #expect(TestImages.decodingReason { try ImageCoderRegistry.shared.decode(contentsOfFile: missing) }
            == .unreadableFile(path: missing, message: String(cString: strerror(ENOENT))))
        #expect(TestImages.decodingReason { try ImageCoderRegistry.shared.decode(contentsOfFile: folder.url.path) }
            == .unreadableFile(path: folder.url.path, message: "it is a directory"))
        let fifo = folder.url.appendingPathComponent("pipe.jpg").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(TestImages.decodingReason { try ImageCoderRegistry.shared.decode(contentsOfFile: fifo) }
            == .unreadableFile(path: fifo, message: "not a regular file"))
        let empty = try folder.write(Data(), as: "empty.jpg")
        #expect(TestImages.decodingReason { try ImageCoderRegistry.shared.decode(contentsOfFile: empty) } == .emptyData)
        let text = try folder.write(Data("hello, world".utf8), as: "note.txt")
        #expect(TestImages.decodingReason { try ImageCoderRegistry.shared.decode(contentsOfFile: text) }
            == .unknownFormat(leadingBytes: "68 65 6c 6c 6f 2c 20 77"))
    }

    @Test func aFileReadsItsLeadingBytesAndAnyRangeWithoutMovingAPosition() throws {
        let folder = try Folder()
        let data = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let file = try ImageFile(path: folder.write(data, as: "bytes.bin"))
        #expect(file.size == data.count)
        #expect(file.leadingBytes == data.prefix(ImageFile.leadingByteCount))
        #expect(try file.read(offset: 150_000, count: 100) == data[150_000..<150_100])
        #expect(try file.read(offset: 199_990, count: 100) == data[199_990...])
        #expect(try file.readAll() == data)
        let small = try ImageFile(path: folder.write(data.prefix(1000), as: "small.bin"))
        #expect(try small.readAll() == data.prefix(1000))
    }
}
