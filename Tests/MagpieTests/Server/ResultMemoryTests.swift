import Foundation
import Magpie
import Testing

@testable import MagpieServer

/// The server's memory of encoded results (a ``MemoryStore`` with ``ImageServer/resultMemoryConfig(capacity:)``): a
/// segmented LRU where results asked for once cycle through a small probation segment and cannot push out results
/// asked for again; the total stays within the capacity.
struct ResultMemoryTests {
    /// A result of `size` bytes whose first byte tells results apart.
    static func result(_ tag: UInt8, size: Int = 1_000) -> ServedImage {
        var data = Data(count: size)
        data[0] = tag
        return ServedImage(data: data, format: .jpeg, lastModified: nil, variesOnAccept: false)
    }

    @Test func freshResultsAreServedUntilProbationIsFull() {
        let cache = MemoryStore<ServedImage>(config: ImageServer.resultMemoryConfig(capacity: 80_000))  // probation: 10,000 bytes, ten results
        for tag in 0..<10 { cache.store(Self.result(UInt8(tag)), forKey: "k\(tag)", admission: .probation) }
        #expect((0..<10).allSatisfy { cache.value(forKey: "k\($0)")?.data.first == UInt8($0) })
    }

    @Test func resultsAskedForOnceDoNotPushOutResultsAskedForAgain() {
        let cache = MemoryStore<ServedImage>(config: ImageServer.resultMemoryConfig(capacity: 80_000))
        for tag in 0..<5 { cache.store(Self.result(UInt8(tag)), forKey: "hot\(tag)", admission: .probation) }
        // The second request protects them.
        for tag in 0..<5 { #expect(cache.value(forKey: "hot\(tag)") != nil) }
        // A scan of a thousand one-time results, eighty times the capacity of probation.
        for tag in 0..<1_000 { cache.store(Self.result(UInt8(tag % 256)), forKey: "once\(tag)", admission: .probation) }
        #expect((0..<5).allSatisfy { cache.value(forKey: "hot\($0)")?.data.first == UInt8($0) })
        #expect(cache.value(forKey: "once0") == nil)
        // One-time results hold at most probation's bytes.
        #expect(cache.totalCost <= 5 * 1_000 + 10_000)
    }

    @Test func aResultReadBackFromDiskIsProtectedAtOnce() {
        let cache = MemoryStore<ServedImage>(config: ImageServer.resultMemoryConfig(capacity: 80_000))
        cache.store(Self.result(7), forKey: "from-disk", admission: .protected)
        for tag in 0..<100 { cache.store(Self.result(UInt8(tag)), forKey: "once\(tag)", admission: .probation) }
        #expect(cache.value(forKey: "from-disk")?.data.first == 7)
    }

    @Test func protectedResultsPastTheirShareAreDemotedThenEvictedOldestFirst() {
        let cache = MemoryStore<ServedImage>(config: ImageServer.resultMemoryConfig(capacity: 80_000))  // protected: 70,000 bytes, seventy results
        for tag in 0..<100 { cache.store(Self.result(UInt8(tag)), forKey: "k\(tag)", admission: .protected) }
        #expect(cache.totalCost <= 80_000)
        #expect(cache.count == 80)
        // The newest seventy are protected, the ten before them on probation, the oldest twenty gone.
        #expect(cache.value(forKey: "k19") == nil)
        #expect((20..<100).allSatisfy { cache.value(forKey: "k\($0)") != nil })
    }

    @Test func aResultTooLargeForItsSegmentIsNotKept() {
        let cache = MemoryStore<ServedImage>(config: ImageServer.resultMemoryConfig(capacity: 80_000))
        cache.store(Self.result(1, size: 10_001), forKey: "fresh", admission: .probation)
        cache.store(Self.result(2, size: 20_001), forKey: "repeated", admission: .protected)
        cache.store(Self.result(3, size: 20_000), forKey: "quarter", admission: .protected)
        #expect(cache.value(forKey: "fresh") == nil)
        #expect(cache.value(forKey: "repeated") == nil)
        #expect(cache.value(forKey: "quarter")?.data.first == 3)
    }

    @Test func storingAKeyAgainReplacesItsResultAndItsBytes() {
        let cache = MemoryStore<ServedImage>(config: ImageServer.resultMemoryConfig(capacity: 80_000))
        cache.store(Self.result(1), forKey: "k", admission: .probation)
        cache.store(Self.result(2, size: 3_000), forKey: "k", admission: .protected)
        #expect(cache.value(forKey: "k")?.data.first == 2)
        #expect(cache.count == 1)
        #expect(cache.totalCost == 3_000)
    }
}
