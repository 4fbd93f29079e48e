import Foundation
import Synchronization
import Testing
@testable import Magpie
@testable import MagpieCore

struct MemoryStorageTests {
    /// A clock that only moves when told to, so expiry tests never sleep.
    final class ManualClock: Sendable {
        private let current: Mutex<Date>

        init(_ start: Date = Date(timeIntervalSinceReferenceDate: 800_000_000)) {
            current = Mutex(start)
        }

        var now: Date { current.withLock { $0 } }

        func advance(by seconds: TimeInterval) {
            current.withLock { $0 = $0.addingTimeInterval(seconds) }
        }

        var cacheClock: CacheClock { CacheClock { [self] in now } }
    }

    /// An image `width` pixels wide and one high: cost `width * 4`.
    static func image(width: Int = 1) -> Image {
        Image(pixels: try! PixelBuffer(width: width, height: 1))
    }

    static func storage(
        costLimit: Int = 1 << 30, countLimit: Int = .max, expiration: StorageExpiration = .seconds(300),
        extending: ExpirationExtending = .cacheTime, clock: ManualClock = ManualClock()
    ) -> MemoryStorage {
        MemoryStorage(
            config: .init(
                totalCostLimit: costLimit, countLimit: countLimit, expiration: expiration,
                accessExtending: extending, cleanInterval: 0, clock: clock.cacheClock))
    }

    // MARK: LRU and limits

    @Test func readingAnEntryProtectsItFromLeastRecentlyUsedEviction() {
        let storage = Self.storage(countLimit: 3)
        for key in ["a", "b", "c"] { storage.store(Self.image(), forKey: key) }
        #expect(storage.value(forKey: "a") != nil)
        storage.store(Self.image(), forKey: "d")
        #expect(storage.keys == ["d", "a", "c"])
        #expect(!storage.isCached(forKey: "b"))
        #expect(storage.statistics.countEvictions == 1)
    }

    @Test func storingAgainMakesTheEntryMostRecentlyUsed() {
        let storage = Self.storage(countLimit: 2)
        storage.store(Self.image(), forKey: "a")
        storage.store(Self.image(), forKey: "b")
        storage.store(Self.image(width: 2), forKey: "a")
        storage.store(Self.image(), forKey: "c")
        #expect(storage.keys == ["c", "a"])
    }

    @Test func costLimitEvictsLeastRecentlyUsedUntilTheTotalFits() {
        let storage = Self.storage(costLimit: 100)
        for key in ["a", "b", "c"] { storage.store(Self.image(), forKey: key, cost: 30) }
        #expect(storage.totalCost == 90)
        storage.store(Self.image(), forKey: "d", cost: 50)
        #expect(storage.keys == ["d", "c"])
        #expect(storage.totalCost == 80)
        #expect(storage.statistics.costEvictions == 2)
        #expect(storage.statistics.countEvictions == 0)
    }

    @Test func costDefaultsToThePixelBytesOfEveryFrame() throws {
        let storage = Self.storage()
        let frame = ImageFrame(pixels: try PixelBuffer(width: 3, height: 2))
        storage.store(try Image(frames: [frame, frame]), forKey: "anim")
        #expect(storage.totalCost == 2 * 3 * 2 * 4)
    }

    @Test func countLimitEvictsTheOldestEntries() {
        let storage = Self.storage(countLimit: 2)
        for key in ["a", "b", "c", "d"] { storage.store(Self.image(), forKey: key) }
        #expect(storage.count == 2)
        #expect(storage.keys == ["d", "c"])
        #expect(storage.statistics.countEvictions == 2)
    }

    @Test func replacingAValueAdjustsTheCostWithoutAddingAnEntry() {
        let storage = Self.storage()
        storage.store(Self.image(width: 10), forKey: "a")
        storage.store(Self.image(width: 3), forKey: "a")
        #expect(storage.count == 1)
        #expect(storage.totalCost == 12)
        #expect(storage.value(forKey: "a")?.width == 3)
    }

    @Test func anEntryCostingMoreThanTheLimitIsNotStoredAndDropsTheOlderValue() {
        let storage = Self.storage(costLimit: 100)
        storage.store(Self.image(), forKey: "keep", cost: 40)
        storage.store(Self.image(), forKey: "big", cost: 40)
        storage.store(Self.image(), forKey: "big", cost: 101)
        #expect(!storage.isCached(forKey: "big"))
        #expect(storage.keys == ["keep"])
        #expect(storage.totalCost == 40)
        #expect(storage.statistics.rejections == 1)
        #expect(storage.statistics.evictions == 0)
    }

    @Test func anEntryCostingExactlyTheLimitIsStored() {
        let storage = Self.storage(costLimit: 100)
        storage.store(Self.image(), forKey: "a", cost: 60)
        storage.store(Self.image(), forKey: "b", cost: 100)
        #expect(storage.keys == ["b"])
    }

    // MARK: Expiration

    @Test func expiredEntriesAreMissesAndAreRemovedOnRead() {
        let clock = ManualClock()
        let storage = Self.storage(expiration: .seconds(10), clock: clock)
        storage.store(Self.image(width: 5), forKey: "a")
        clock.advance(by: 9)
        #expect(storage.isCached(forKey: "a"))
        clock.advance(by: 1)
        #expect(!storage.isCached(forKey: "a"))
        #expect(storage.count == 1, "isCached has no side effects")
        #expect(storage.value(forKey: "a") == nil)
        #expect(storage.count == 0)
        #expect(storage.totalCost == 0)
        #expect(storage.statistics.expirations == 1)
        #expect(storage.statistics.misses == 1)
    }

    @Test func extendingNoneLeavesTheExpiryAlone() {
        let clock = ManualClock()
        let storage = Self.storage(expiration: .seconds(10), clock: clock)
        storage.store(Self.image(), forKey: "a")
        clock.advance(by: 6)
        #expect(storage.value(forKey: "a", extendingExpiration: ExpirationExtending.none) != nil)
        clock.advance(by: 6)
        #expect(storage.value(forKey: "a") == nil)
    }

    @Test func extendingCacheTimeRestartsTheEntrysOwnExpiration() {
        let clock = ManualClock()
        let storage = Self.storage(expiration: .seconds(300), clock: clock)
        storage.store(Self.image(), forKey: "a", expiration: .seconds(10))
        clock.advance(by: 6)
        #expect(storage.value(forKey: "a", extendingExpiration: .cacheTime) != nil)
        clock.advance(by: 9)
        #expect(storage.isCached(forKey: "a"), "extended to 6 + 10 s")
        clock.advance(by: 1)
        #expect(!storage.isCached(forKey: "a"), "the entry's 10 s, not the config's 300 s")
    }

    @Test func extendingExpirationTimeSetsANewExpiryFromNow() {
        let clock = ManualClock()
        let storage = Self.storage(expiration: .seconds(10), clock: clock)
        storage.store(Self.image(), forKey: "a")
        clock.advance(by: 6)
        #expect(storage.value(forKey: "a", extendingExpiration: .expirationTime(.seconds(100))) != nil)
        clock.advance(by: 99)
        #expect(storage.isCached(forKey: "a"))
        // A later .cacheTime read goes back to the entry's own 10 s.
        #expect(storage.value(forKey: "a", extendingExpiration: .cacheTime) != nil)
        clock.advance(by: 10)
        #expect(!storage.isCached(forKey: "a"))
    }

    @Test func readsWithoutAnExplicitRuleUseTheConfiguredAccessExtending() {
        let clock = ManualClock()
        let storage = Self.storage(expiration: .seconds(10), extending: .none, clock: clock)
        storage.store(Self.image(), forKey: "a")
        clock.advance(by: 6)
        #expect(storage.value(forKey: "a") != nil)
        clock.advance(by: 6)
        #expect(storage.value(forKey: "a") == nil)
    }

    @Test func perEntryExpirationOverridesTheConfiguredOne() {
        let clock = ManualClock()
        let storage = Self.storage(expiration: .seconds(10), clock: clock)
        storage.store(Self.image(), forKey: "short", expiration: .seconds(1))
        storage.store(Self.image(), forKey: "forever", expiration: .never)
        storage.store(Self.image(), forKey: "dated", expiration: .date(clock.now.addingTimeInterval(50)))
        storage.store(Self.image(), forKey: "days", expiration: .days(1))
        storage.store(Self.image(), forKey: "default")
        clock.advance(by: 2)
        #expect(!storage.isCached(forKey: "short"))
        #expect(storage.isCached(forKey: "default"))
        clock.advance(by: 40)
        #expect(!storage.isCached(forKey: "default"))
        #expect(storage.isCached(forKey: "dated"))
        clock.advance(by: 10)
        #expect(!storage.isCached(forKey: "dated"))
        clock.advance(by: 86_400 - 52)
        #expect(!storage.isCached(forKey: "days"))
        clock.advance(by: 1e9)
        #expect(storage.isCached(forKey: "forever"))
    }

    @Test func alreadyExpiredEntriesAreNotStoredAndDropTheOlderValue() {
        let clock = ManualClock()
        let storage = Self.storage(clock: clock)
        storage.store(Self.image(), forKey: "a")
        storage.store(Self.image(), forKey: "a", expiration: .expired)
        #expect(storage.count == 0)
        storage.store(Self.image(), forKey: "b", expiration: .date(clock.now))
        storage.store(Self.image(), forKey: "c", expiration: .seconds(0))
        #expect(storage.count == 0)
        #expect(storage.statistics.rejections == 3)
    }

    @Test func removeExpiredReturnsHowManyWereRemoved() {
        let clock = ManualClock()
        let storage = Self.storage(expiration: .seconds(10), clock: clock)
        for i in 0..<5 { storage.store(Self.image(width: 2), forKey: "old\(i)") }
        clock.advance(by: 5)
        for i in 0..<3 { storage.store(Self.image(), forKey: "new\(i)") }
        clock.advance(by: 6)
        #expect(storage.removeExpired() == 5)
        #expect(Set(storage.keys) == ["new0", "new1", "new2"])
        #expect(storage.totalCost == 12)
        #expect(storage.removeExpired() == 0)
        #expect(storage.statistics.expirations == 5)
    }

    @Test func evictionRemovesExpiredEntriesBeforeLiveOnes() {
        let clock = ManualClock()
        let storage = Self.storage(countLimit: 3, clock: clock)
        storage.store(Self.image(), forKey: "old")
        storage.store(Self.image(), forKey: "older")
        storage.store(Self.image(), forKey: "recent", expiration: .seconds(5))
        clock.advance(by: 10)
        storage.store(Self.image(), forKey: "new")
        #expect(Set(storage.keys) == ["old", "older", "new"])
        #expect(storage.statistics.expirations == 1)
        #expect(storage.statistics.evictions == 0)
    }

    // MARK: Removal and statistics

    @Test func removeAndRemoveAllEmptyTheStorage() {
        let storage = Self.storage()
        for i in 0..<10 { storage.store(Self.image(width: i + 1), forKey: "\(i)") }
        storage.remove(forKey: "3")
        storage.remove(forKey: "missing")
        #expect(storage.count == 9)
        #expect(storage.totalCost == (1...10).reduce(0, +) * 4 - 16)
        #expect(storage.value(forKey: "3") == nil)
        storage.removeAll()
        #expect(storage.count == 0)
        #expect(storage.totalCost == 0)
        #expect(storage.keys.isEmpty)
        #expect(storage.value(forKey: "0") == nil)
        storage.store(Self.image(), forKey: "again")
        #expect(storage.keys == ["again"])
    }

    @Test func freedSlotsAreReusedWithoutCorruptingTheList() {
        let storage = Self.storage(countLimit: 4)
        for round in 0..<50 {
            storage.store(Self.image(), forKey: "k\(round % 7)")
            if round % 3 == 0 { storage.remove(forKey: "k\((round + 2) % 7)") }
        }
        let keys = storage.keys
        #expect(keys.count == storage.count)
        #expect(Set(keys).count == keys.count)
        #expect(storage.count <= 4)
    }

    @Test func statisticsCountHitsMissesAndReset() {
        let storage = Self.storage()
        storage.store(Self.image(), forKey: "a")
        _ = storage.value(forKey: "a")
        _ = storage.value(forKey: "a")
        _ = storage.value(forKey: "b")
        _ = storage.isCached(forKey: "a")
        #expect(storage.statistics.hits == 2)
        #expect(storage.statistics.misses == 1)
        #expect(abs(storage.statistics.hitRate - 2.0 / 3.0) < 1e-9)
        storage.resetStatistics()
        #expect(storage.statistics == MemoryStorage.Statistics())
    }

    // MARK: Configuration

    @Test func defaultCostLimitIsAQuarterOfTheAvailableMemory() {
        let limit = MemoryStorage.Config.defaultTotalCostLimit
        #expect(limit > 0)
        #expect(limit <= MemoryStorage.Config.physicalMemory() / 4)
        #expect(MemoryStorage.Config().totalCostLimit == limit)
        #expect(MemoryStorage.Config().countLimit == .max)
        #expect(MemoryStorage.Config().expiration == .seconds(300))
        #expect(MemoryStorage.Config().cleanInterval == 120)
    }

    @Test func cgroupLimitIsReadOnlyWhenItIsANumber() {
        #expect(MemoryStorage.Config.parseCgroupLimit("max\n") == nil)
        #expect(MemoryStorage.Config.parseCgroupLimit("1073741824\n") == 1_073_741_824)
        #expect(MemoryStorage.Config.parseCgroupLimit("") == nil)
        #expect(MemoryStorage.Config.cgroupMemoryLimit(path: "/nonexistent/memory.max") == nil)
    }

    // MARK: Concurrency

    @Test func concurrentStoresReadsAndRemovesKeepTheTotalsConsistent() async {
        let costLimit = 4_000, countLimit = 50
        let storage = Self.storage(costLimit: costLimit, countLimit: countLimit)
        let images = (1...40).map { Self.image(width: $0) }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    var seed = UInt64(worker + 1) &* 0x9E37_79B9_7F4A_7C15
                    for _ in 0..<3_000 {
                        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        let pick = Int(truncatingIfNeeded: seed >> 33)
                        let key = "key\(pick % 120)"
                        switch pick % 10 {
                        case 0..<4: storage.store(images[pick % images.count], forKey: key)
                        case 4..<9: _ = storage.value(forKey: key)
                        default: storage.remove(forKey: key)
                        }
                    }
                }
            }
        }
        let keys = storage.keys
        let costs = keys.compactMap { storage.value(forKey: $0, extendingExpiration: ExpirationExtending.none)?.cost }
        #expect(costs.count == keys.count)
        #expect(keys.count == storage.count)
        #expect(Set(keys).count == keys.count)
        #expect(costs.reduce(0, +) == storage.totalCost)
        #expect(storage.count <= countLimit)
        #expect(storage.totalCost <= costLimit)
        let stats = storage.statistics
        #expect(stats.hits + stats.misses >= 16 * 3_000 * 4 / 10)
    }

    // MARK: Background sweep

    @Test func theBackgroundSweepRemovesExpiredEntries() async throws {
        let clock = ManualClock()
        let storage = MemoryStorage(
            config: .init(expiration: .seconds(10), cleanInterval: 0.01, clock: clock.cacheClock))
        storage.store(Self.image(), forKey: "a")
        storage.store(Self.image(), forKey: "b", expiration: .never)
        clock.advance(by: 11)
        let deadline = ContinuousClock.now + .seconds(5)
        while storage.count > 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(storage.keys == ["b"])
        #expect(storage.statistics.expirations == 1)
    }

    @Test func theBackgroundSweepDoesNotKeepTheStorageAlive() async throws {
        var storage: MemoryStorage? = MemoryStorage(config: .init(cleanInterval: 0.005))
        weak let weakStorage = storage
        let task = try #require(storage?.sweepTask)
        storage?.store(Self.image(), forKey: "a")
        try await Task.sleep(for: .milliseconds(30))
        storage = nil
        let deadline = ContinuousClock.now + .seconds(5)
        while weakStorage != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(weakStorage == nil)
        // deinit cancels the sweep, so the task ends instead of sleeping forever.
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await task.value; return true }
            group.addTask { try? await Task.sleep(for: .seconds(5)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(ended)
    }

    @Test func aZeroCleanIntervalStartsNoSweep() {
        let storage = MemoryStorage(config: .init(cleanInterval: 0))
        #expect(storage.sweepTask == nil)
    }
}
