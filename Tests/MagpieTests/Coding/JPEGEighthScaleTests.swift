import CImageCodecs
import Foundation
import Testing
@testable import Magpie
@testable import MagpieCore

/// The 1/8-scale baseline decoder (jpeg_eighth.c) against libjpeg's own decode of the same file: the pixels must be
/// the same bytes, on one thread and on two, and damaged files must fail as they did before it existed.
struct JPEGEighthScaleTests {
    private typealias Path = JPEGDecodePath

    /// Decodes at the 1/8 DCT scale (a 1×1 minimum picks it) through one path.
    private func decode(_ data: Data, _ path: Path) -> Path.Outcome { path.decode(data) }

    private func noisyPhoto(width: Int = 2048, height: Int = 1536) throws -> Data {
        try TestImages.noisyPhotoJPEG(width: width, height: height)
    }

    @Test func aLargeBaselineFileGivesLibjpegsPixelsOnOneAndTwoThreads() throws {
        let data = try noisyPhoto()
        #expect(data.count > 500_000)
        let reference = decode(data, .libjpeg)
        #expect(reference.status == 0 && reference.width == 256 && reference.height == 192)
        #expect(decode(data, .oneThread) == reference)
        #expect(decode(data, .twoThreads) == reference)
    }

    /// Pinned to one core (taskset, a cpuset), a second decoding thread only takes turns with the first: the decoders
    /// ask the process's affinity mask, which the kernel also reports as Cpus_allowed_list.
    @Test func theSecondThreadIsUsedOnlyWhenTheAffinityMaskAllowsTwoCores() throws {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let list = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
        let allowed = list.dropFirst("Cpus_allowed_list:".count).split(separator: ",").reduce(0) { count, range in
            let bounds = range.trimmingCharacters(in: .whitespaces).split(separator: "-").compactMap { Int($0) }
            return count + (bounds.count == 2 ? bounds[1] - bounds[0] + 1 : 1)
        }
        #expect(Int(mg_usable_cpu_count()) == allowed)
        #expect((JPEGCoder.decodeFlags & Int32(MG_JPEG_TWO_THREADS) != 0) == (allowed > 1))
    }

    @Test func twoThreadsSplitTheScanOfALargeFile() throws {
        let data = try noisyPhoto()
        let before = mg_jpeg_eighth_split_count()
        #expect(decode(data, .twoThreads).status == 0)
        #expect(mg_jpeg_eighth_split_count() > before)
    }

    /// Phones store a second image (depth map, preview) after the first one's EOI: the split is the scan's middle.
    @Test func aFileWithASecondImageAfterItsEndIsSplitAndDecodedTheSame() throws {
        let data = try noisyPhoto()
        let withSecond = data + data
        let before = mg_jpeg_eighth_split_count()
        let outcome = decode(withSecond, .twoThreads)
        #expect(mg_jpeg_eighth_split_count() > before)
        #expect(outcome == decode(withSecond, .libjpeg))
        #expect(outcome == decode(data, .libjpeg))
    }

    @Test(arguments: Corpus.rows.filter { $0.format == "JPEG" })
    func everyCorpusJPEGGivesLibjpegsPixelsAtAnEighth(_ row: Corpus.Row) throws {
        let data = try Data(contentsOf: row.url)
        let reference = decode(data, .libjpeg)
        #expect(decode(data, .oneThread) == reference)
        #expect(decode(data, .twoThreads) == reference)
    }

    @Test func aCutFileFailsAsItDidWithLibjpegAlone() throws {
        let data = try noisyPhoto()
        for keep in [data.count / 3, data.count / 2 + 17, data.count - 2, data.count - 700] {
            let cut = data.prefix(keep)
            let reference = decode(cut, .libjpeg)
            #expect(reference.status != 0, "cut at \(keep)")
            #expect(decode(cut, .twoThreads) == reference, "cut at \(keep)")
        }
    }

    /// Flipped bits either still decode (to exactly what libjpeg makes of them) or fail with libjpeg's error.
    @Test func damagedDataGivesLibjpegsResultWhateverItIs() throws {
        let data = try noisyPhoto(width: 1024, height: 768)
        for damaged in TestImages.bitFlipped(data, count: 40, seed: 42) {
            let reference = decode(damaged, .libjpeg)
            #expect(decode(damaged, .oneThread) == reference)
            #expect(decode(damaged, .twoThreads) == reference)
        }
    }
}
