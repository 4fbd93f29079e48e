import Foundation
import MagpieCore
import Testing

@testable import MagpieServer

/// How many times a request uses the SQLite indexes of the server's two disk caches (the originals and the results):
/// each use is a lock and a query, so the count is a budget.
struct ServerCacheTripsTests {
    /// The index uses of both caches so far, less the batched writes of access times (at most one a second per cache,
    /// whatever the number of reads: no request's own cost, and due whenever a loaded machine makes a request last
    /// longer than the batching delay).
    static func trips(_ server: ImageServer) -> Int {
        let caches = [server.results as? DiskStorage, server.manager.cache.diskStorage].compactMap { $0 }
        return caches.reduce(0) { $0 + $1.indexTripCount - $1.accessTimeFlushCount }
    }

    @Test func aColdRequestCostsThreeTripsAndADiskHitOne() async throws {
        // No result memory: the second request must come from the results on disk.
        try await ServerFixture.with(configure: { $0.memoryCacheSize = 0 }) { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:fit:40:30"], extension: "png")
            let before = Self.trips(fixture.server)
            let cold = try await fixture.request(path)
            #expect(cold.status == 200 && cold.header("X-Magpie-Cache") == "none")
            await fixture.server.resultWrites.waitUntilIdle()
            // The source's bytes are written after the answer too.
            for _ in 0..<500 where fixture.server.manager.cache.pendingWriteCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
            let coldTrips = Self.trips(fixture.server) - before
            // Before the answer, the results' lookup; the originals' freshness lookup finds no payload file and asks
            // no index (which also tells the pipeline not to look for the bytes); after the answer, the original's
            // write and the result's write, each reading the size total under the same lock. The Last-Modified the
            // response carries comes with the retrieved source, not from another trip.
            #expect(coldTrips == 3, "a cold request used the indexes \(coldTrips) times")
            let hitBefore = Self.trips(fixture.server)
            let hit = try await fixture.request(path)
            #expect(hit.status == 200 && hit.header("X-Magpie-Cache") == "disk" && hit.body == cold.body)
            #expect(Self.trips(fixture.server) - hitBefore == 1)
        }
    }
}
