import Foundation
import Synchronization
@testable import Magpie
@testable import MagpieCore

/// A data cache in a dictionary: the smallest complete ``DataCaching`` backend. It proves the port: the
/// pipeline runs over it with nothing outside the tests changed.
final class InMemoryDataCache: DataCaching {
    private let entries = Mutex<[String: DataCacheEntry]>([:])
    private let refreshes = Mutex<[String]>([])
    let clock: CacheClock
    let defaultExpiration: StorageExpiration

    init(clock: CacheClock = .system, defaultExpiration: StorageExpiration = .days(7)) {
        self.clock = clock
        self.defaultExpiration = defaultExpiration
    }

    /// Keys refreshed by a 304, in order.
    var refreshedKeys: [String] { refreshes.withLock { $0 } }
    var keys: [String] { entries.withLock { $0.keys.sorted() } }
    func entry(_ key: String) -> DataCacheEntry? { entries.withLock { $0[key] } }

    func cachedEntry(forKey key: String, extendingExpiration: ExpirationExtending?) async throws -> DataCacheEntry? {
        let now = clock.now()
        return entries.withLock { entries in
            guard var entry = entries[key], !entry.metadata.isExpired(at: now) else { return nil }
            entry.metadata.lastAccess = now
            entries[key] = entry
            return entry
        }
    }

    func cachedMetadata(forKey key: String) async throws -> DataCacheMetadata? {
        let now = clock.now()
        return entries.withLock { entries in entries[key].flatMap { $0.metadata.isExpired(at: now) ? nil : $0.metadata } }
    }

    func storeData(_ data: Data, forKey key: String, expiration: StorageExpiration?, validators: HTTPValidators) async throws {
        let now = clock.now()
        let metadata = DataCacheMetadata(
            key: key, size: data.count, created: now, lastAccess: now,
            expiration: (expiration ?? defaultExpiration).estimatedExpiration(since: now), validators: validators)
        entries.withLock { $0[key] = DataCacheEntry(data: data, metadata: metadata) }
    }

    func refreshEntry(forKey key: String, validators: HTTPValidators, expiration: StorageExpiration?) async throws -> Bool {
        let now = clock.now()
        let found = entries.withLock { entries -> Bool in
            guard var entry = entries[key] else { return false }
            entry.metadata.validators = validators
            entry.metadata.created = now
            entry.metadata.expiration = (expiration ?? defaultExpiration).estimatedExpiration(since: now)
            entries[key] = entry
            return true
        }
        if found { refreshes.withLock { $0.append(key) } }
        return found
    }

    func removeData(forKey key: String) async throws { entries.withLock { $0[key] = nil } }
    func removeAllData() async throws { entries.withLock { $0.removeAll() } }

    func removeExpiredData() async throws -> [String] {
        let now = clock.now()
        return entries.withLock { entries in
            let expired = entries.filter { $0.value.metadata.isExpired(at: now) }.map(\.key)
            for key in expired { entries[key] = nil }
            return expired.sorted()
        }
    }

    func containsData(forKey key: String) async -> Bool {
        let now = clock.now()
        return entries.withLock { $0[key].map { !$0.metadata.isExpired(at: now) } ?? false }
    }

    func totalDataSize() async throws -> Int { entries.withLock { $0.values.reduce(0) { $0 + $1.data.count } } }
}

/// A memory cache in a dictionary, without expiry, enforcing only a count limit of its own (by dropping any entry):
/// the smallest ``MemoryCaching`` backend. It names none of ``MemoryStorage``'s types.
final class DictionaryMemoryCache: MemoryCaching {
    private let images = Mutex<[String: Image]>([:])
    private let reads = Atomic<Int>(0)
    private let limit = Mutex(Int.max)

    /// Most entries held; lowering it drops entries at once.
    var countLimit: Int {
        get { limit.withLock { $0 } }
        set {
            limit.withLock { $0 = newValue }
            images.withLock { images in
                while images.count > max(newValue, 0), let key = images.keys.first { images[key] = nil }
            }
        }
    }

    var keys: [String] { images.withLock { $0.keys.sorted() } }
    var hits: Int { reads.load(ordering: .relaxed) }

    func image(forKey key: String, extendingExpiration: ExpirationExtending?) -> Image? {
        let image = images.withLock { $0[key] }
        if image != nil { reads.add(1, ordering: .relaxed) }
        return image
    }

    func storeImage(_ image: Image, forKey key: String, expiration: StorageExpiration?) {
        let limit = countLimit
        images.withLock { images in
            images[key] = image
            while images.count > max(limit, 0), let other = images.keys.first(where: { $0 != key }) { images[other] = nil }
            if limit < 1 { images[key] = nil }
        }
    }
    func removeImage(forKey key: String) { images.withLock { $0[key] = nil } }
    func removeAllImages() { images.withLock { $0.removeAll() } }
    func removeExpiredImages() -> Int { 0 }
    func containsImage(forKey key: String) -> Bool { images.withLock { $0[key] != nil } }
}

/// A loader that answers from a script (URL → bytes and validators) and records every call: the
/// smallest ``ImageDataLoading``. A conditional request whose ETag matches the script's gets a 304.
final class ScriptedLoader: ImageDataLoading {
    struct Call: Sendable, Equatable {
        let url: URL
        let validators: HTTPValidators?
        let priority: Double
        let timeout: Duration?
        let spoolDirectory: URL?
    }

    struct Answer: Sendable {
        var data: Data
        var etag: String?
        var maxAge: TimeInterval?
    }

    private let script: Mutex<[URL: Answer]>
    private let log = Mutex<[Call]>([])
    /// Held until the test opens it, when given: lets callers pile up on one load.
    let gate: SharedWorkTests.Gate?

    init(_ script: [URL: Answer], gate: SharedWorkTests.Gate? = nil) {
        self.script = Mutex(script)
        self.gate = gate
    }

    var calls: [Call] { log.withLock { $0 } }
    func set(_ url: URL, _ answer: Answer) { script.withLock { $0[url] = answer } }

    func loadImageData(_ request: ImageDataRequest) async throws -> ImageDataResult {
        guard case .network(let resource) = request.source else {
            throw MagpieError.requestFailed(reason: .unsupportedScheme(request.source.url ?? URL(string: "about:blank")!))
        }
        let url = resource.downloadURL
        log.withLock {
            $0.append(Call(
                url: url, validators: request.validators, priority: request.priority, timeout: request.timeout,
                spoolDirectory: request.spoolDirectory))
        }
        await gate?.wait()
        guard let answer = script.withLock({ $0[url] }) else {
            throw MagpieError.responseFailed(reason: .badStatus(HTTPResponseInfo(url: url, statusCode: 404, headers: [])))
        }
        var headers = [HTTPHeaderField(name: "Content-Type", value: "image/png")]
        if let etag = answer.etag { headers.append(HTTPHeaderField(name: "ETag", value: etag)) }
        if let maxAge = answer.maxAge { headers.append(HTTPHeaderField(name: "Cache-Control", value: "max-age=\(Int(maxAge))")) }
        if let etag = request.validators?.etag, etag == answer.etag {
            let response = HTTPResponseInfo(url: url, statusCode: 304, headers: headers)
            return ImageDataResult(data: Data(), url: url, response: response, notModified: true, metrics: DownloadMetrics())
        }
        request.progress?(DownloadProgress(receivedBytes: answer.data.count, expectedBytes: answer.data.count))
        let response = HTTPResponseInfo(url: url, statusCode: 200, headers: headers)
        return ImageDataResult(data: answer.data, url: url, response: response, notModified: false, metrics: DownloadMetrics())
    }
}
