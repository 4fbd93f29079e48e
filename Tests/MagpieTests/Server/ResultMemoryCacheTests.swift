import Foundation
import Magpie
import Testing

@testable import MagpieServer

/// The server's memory of encoded results: a segmented LRU where results asked for once cycle through a small
/// probation segment and cannot push out results asked for again; the total stays within the capacity.
struct ResultMemoryCacheTests {
    /// A result of `size` bytes whose first byte tells results apart.
    static func result(_ tag: UInt8, size: Int = 1_000) -> ServedImage {
        var data = Data(count: size)
        data[0] = tag
        return ServedImage(data: data, format: .jpeg, lastModified: nil, variesOnAccept: false)
    }

    @Test func freshResultsAreServedUntilProbationIsFull() {
        let cache = ResultMemoryCache(capacity: 80_000)  // probation: 10,000 bytes, ten results
        for tag in 0..<10 { cache.store(Self.result(UInt8(tag)), forKey: "k\(tag)", admission: .fresh) }
        #expect((0..<10).allSatisfy { cache.value(forKey: "k\($0)")?.data.first == UInt8($0) })
    }

    @Test func resultsAskedForOnceDoNotPushOutResultsAskedForAgain() {
        let cache = ResultMemoryCache(capacity: 80_000)
        for tag in 0..<5 { cache.store(Self.result(UInt8(tag)), forKey: "hot\(tag)", admission: .fresh) }
        // The second request protects them.
        for tag in 0..<5 { #expect(cache.value(forKey: "hot\(tag)") != nil) }
        // A scan of a thousand one-time results, eighty times the capacity of probation.
        for tag in 0..<1_000 { cache.store(Self.result(UInt8(tag % 256)), forKey: "once\(tag)", admission: .fresh) }
        #expect((0..<5).allSatisfy { cache.value(forKey: "hot\($0)")?.data.first == UInt8($0) })
        #expect(cache.value(forKey: "once0") == nil)
        // One-time results hold at most probation's bytes.
        #expect(cache.usage.bytes <= 5 * 1_000 + cache.probationCapacity)
    }

    @Test func aResultReadBackFromDiskIsProtectedAtOnce() {
        let cache = ResultMemoryCache(capacity: 80_000)
        cache.store(Self.result(7), forKey: "from-disk", admission: .repeated)
        for tag in 0..<100 { cache.store(Self.result(UInt8(tag)), forKey: "once\(tag)", admission: .fresh) }
        #expect(cache.value(forKey: "from-disk")?.data.first == 7)
    }

    @Test func protectedResultsPastTheirShareAreDemotedThenEvictedOldestFirst() {
        let cache = ResultMemoryCache(capacity: 80_000)  // protected: 70,000 bytes, seventy results
        for tag in 0..<100 { cache.store(Self.result(UInt8(tag)), forKey: "k\(tag)", admission: .repeated) }
        let usage = cache.usage
        #expect(usage.bytes <= 80_000)
        #expect(usage.count == 80)
        // The newest seventy are protected, the ten before them on probation, the oldest twenty gone.
        #expect(cache.value(forKey: "k19") == nil)
        #expect((20..<100).allSatisfy { cache.value(forKey: "k\($0)") != nil })
    }

    @Test func aResultTooLargeForItsSegmentIsNotKept() {
        let cache = ResultMemoryCache(capacity: 80_000)
        cache.store(Self.result(1, size: 10_001), forKey: "fresh", admission: .fresh)
        cache.store(Self.result(2, size: 20_001), forKey: "repeated", admission: .repeated)
        cache.store(Self.result(3, size: 20_000), forKey: "quarter", admission: .repeated)
        #expect(cache.value(forKey: "fresh") == nil)
        #expect(cache.value(forKey: "repeated") == nil)
        #expect(cache.value(forKey: "quarter")?.data.first == 3)
    }

    @Test func storingAKeyAgainReplacesItsResultAndItsBytes() {
        let cache = ResultMemoryCache(capacity: 80_000)
        cache.store(Self.result(1), forKey: "k", admission: .fresh)
        cache.store(Self.result(2, size: 3_000), forKey: "k", admission: .repeated)
        #expect(cache.value(forKey: "k")?.data.first == 2)
        #expect(cache.usage.count == 1)
        #expect(cache.usage.bytes == 3_000)
    }
}
