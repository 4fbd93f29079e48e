import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Magpie
@testable import MagpieCore

/// DiskStorage against other processes: killed writers and concurrent writers.
/// The child is `magpie-cache-stress` (Tests/CacheStressHelper), whose payloads verify themselves.
struct DiskStorageProcessTests {

    func launch(_ folder: TemporaryFolder, seed: Int, count: Int, limit: Int) throws -> Process {
        let process = Process()
        process.executableURL = try BuiltProducts.executable("magpie-cache-stress")
        process.arguments = [folder.url.path, "shared", "\(seed)", "\(count)", "\(limit)"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Every indexed entry verifies, and files and rows agree.
    func checkIntact(_ folder: TemporaryFolder, limit: Int) throws {
        let disk = try DiskStorage(config: .init(name: "shared", directory: folder.url, sizeLimit: limit))
        var served = 0
        for key in 0..<40 {
            guard let data = try disk.value(forKey: "key-\(key)") else { continue }
            served += 1
            let header = data.prefix(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            #expect(header == key, "key-\(key) served another key's bytes")
            #expect(data.count >= 2_008, "key-\(key) served a short payload (\(data.count) bytes)")
        }
        // No orphan payloads: every file on disk has its index row. (A row whose file a killed
        // evictor already deleted is harmless: the read above found it missing and removed it.)
        let files = try FileManager.default.subpathsOfDirectory(atPath: disk.directoryURL.appendingPathComponent("entries").path)
            .filter { $0.count > 3 }
        for file in files {
            let name = String(file.split(separator: "/").last ?? "")
            let key = (0..<40).map { "key-\($0)" }.first { disk.fileName(forKey: $0) == name }
            let indexed = try key.flatMap { try disk.metadata(forKey: $0) } != nil
            #expect(indexed, "orphan payload file \(file)")
        }
        #expect(served == (try disk.count()), "after reading every key, rows and served entries agree")
        if limit > 0 {
            // A writer killed between its commit and its eviction leaves the folder over the limit until the next write
            // (or sweep) evicts: the contract is that the next write brings it back (checked last: it may evict).
            try disk.store(Data(count: 8), forKey: "probe")
            try disk.remove(forKey: "probe")
            #expect(try disk.totalSize() <= limit)
        }
    }

    /// Waits for `process` on a Dispatch thread: a blocked cooperative thread (of two) stalls every other suite.
    static func waitOffThePool(for process: Process) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
    }

    @Test
    func writerKilledAtRandomMomentsNeverLeavesAServedPartialEntry() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        for round in 0..<20 {
            let process = try launch(folder, seed: round, count: 0, limit: 400_000)
            try await Task.sleep(for: .milliseconds(Int.random(in: 30...250)))
            kill(process.processIdentifier, SIGKILL)
            await Self.waitOffThePool(for: process)
            try checkIntact(folder, limit: 400_000)
        }
        let tmp = try FileManager.default.contentsOfDirectory(atPath: folder.url.appendingPathComponent("shared/tmp").path)
        #expect(tmp.isEmpty, "temporary files of killed writers are cleaned at open: \(tmp)")
    }

    @Test
    func storagesOpeningOneNewFolderAtOnceAllOpenIt() async throws {
        // Each switch of a fresh index to WAL wants an exclusive lock; SQLite refuses a second connection at once
        // (no busy wait), as two `magpie fetch` processes started together once saw. Processes and connections
        // behave alike here, so threads opening their own connections stand in for processes.
        for round in 0..<5 {
            let folder = try TemporaryFolder(); defer { folder.cleanUp() }
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                do {
                    _ = try DiskStorage(config: .init(name: "shared", directory: folder.url))
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [], "round \(round)")
        }
    }

    @Test
    func twoProcessesSharingADirectoryDoNotCorruptOrOverfillIt() async throws {
        let folder = try TemporaryFolder(); defer { folder.cleanUp() }
        let limit = 300_000
        _ = try DiskStorage(config: .init(name: "shared", directory: folder.url, sizeLimit: limit))
        let writers = try (1...2).map { try launch(folder, seed: $0, count: 300, limit: limit) }
        for writer in writers { await Self.waitOffThePool(for: writer) }
        for writer in writers { #expect(writer.terminationStatus == 0, "a writer saw a corrupt read or failed") }
        try checkIntact(folder, limit: limit)
    }
}
