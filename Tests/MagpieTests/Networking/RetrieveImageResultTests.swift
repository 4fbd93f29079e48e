import Foundation
import Testing
@testable import MagpieCore

/// ``RetrieveImageResult`` keeps what a transfer left and the source asked for behind its own storage (a hit carries
/// neither): these pin that every field still reads back what was given or set, as a plain struct's would.
@Suite struct RetrieveImageResultTests {
    static let asked = Source.network(URL(string: "https://example.com/asked.jpg")!)
    static let alternative = Source.network(URL(string: "https://example.com/alternative.jpg")!)

    static func image() throws -> Image { Image(pixels: try TestImages.gradient(width: 4, height: 3)) }

    static func validators() -> HTTPValidators { HTTPValidators(etag: "\"v1\"", lastModified: "Fri, 15 Jan 2027 08:00:00 GMT") }

    @Test func aDownloadReadsBackItsBytesMetricsValidatorsAndBothSources() throws {
        var metrics = DownloadMetrics()
        metrics.bytesReceived = 123
        let result = RetrieveImageResult(
            image: try Self.image(), cacheType: .none, source: Self.alternative, originalSource: Self.asked,
            originalData: Data([1, 2, 3]), revalidated: false, downloadMetrics: metrics, validators: Self.validators())
        #expect(result.originalData == Data([1, 2, 3]))
        #expect(result.downloadMetrics?.bytesReceived == 123)
        #expect(result.validators == Self.validators())
        #expect(result.source.cacheKey == Self.alternative.cacheKey)
        #expect(result.originalSource.cacheKey == Self.asked.cacheKey)
        #expect(result.served == .downloaded)
    }

    @Test func aHitHasNoTransferAndItsSourceIsTheOneAskedFor() throws {
        let result = RetrieveImageResult(image: try Self.image(), cacheType: .memory, source: Self.asked, dataCache: nil, dataCacheKey: nil)
        #expect(result.originalData == nil)
        #expect(result.downloadMetrics == nil)
        #expect(result.validators == nil)
        #expect(result.originalSource.cacheKey == Self.asked.cacheKey)
        #expect(result.served == .fresh)
    }

    @Test func changingTheSourceOfAHitKeepsTheSourceAskedFor() throws {
        var result = RetrieveImageResult(image: try Self.image(), cacheType: .disk, source: Self.asked, dataCache: nil, dataCacheKey: nil)
        result.source = Self.alternative
        #expect(result.source.cacheKey == Self.alternative.cacheKey)
        #expect(result.originalSource.cacheKey == Self.asked.cacheKey)
        result.originalSource = Self.alternative
        result.source = Self.asked
        #expect(result.originalSource.cacheKey == Self.alternative.cacheKey)
    }

    @Test func settingOneTransferFieldLeavesTheOthersAndCopiesStayApart() throws {
        var result = RetrieveImageResult(image: try Self.image(), cacheType: .memory, source: Self.asked, dataCache: nil, dataCacheKey: nil)
        result.validators = Self.validators()
        let before = result
        result.originalData = Data([9])
        #expect(result.validators == Self.validators())
        #expect(result.originalData == Data([9]))
        #expect(before.originalData == nil, "a copy made before the change does not see it")
        result.validators = nil
        result.originalData = nil
        #expect(result.validators == nil && result.originalData == nil && result.downloadMetrics == nil)
        #expect(before.validators == Self.validators())
    }
}
