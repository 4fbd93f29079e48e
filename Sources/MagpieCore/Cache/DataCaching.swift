#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The data cache port: encoded bytes by key, with the HTTP validators and expiry that came with
/// them (Nuke's `DataCaching`, with what revalidation needs). ``DiskStorage`` implements it; a
/// backend of your own (an object store, a shared cache service, memory for tests) is one type that
/// conforms, handed to ``ImageCache/init(name:memoryCache:dataCache:)``.
///
/// Every method is async: a backend that blocks (files, SQLite) runs its work on an executor of its own, never on
/// Swift's cooperative pool. Keys are the ones
/// ``ImageCache`` computes (``CacheKey``); a backend stores them as given.
public protocol DataCaching: AnyObject, Sendable {
    /// The clock entries' dates are measured with (a test clock makes expiry and `max-age` testable).
    var clock: CacheClock { get }

    /// The bytes and metadata stored under `key`; nil when there is none or it expired.
    /// A backend that cannot vouch for the bytes (a failed checksum, a half-written file) answers nil.
    ///
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - extendingExpiration: What this read does to the entry's expiry; nil for the backend's default.
    func cachedEntry(forKey key: String, extendingExpiration: ExpirationExtending?) async throws -> DataCacheEntry?

    /// The entry under `key` (as ``cachedEntry(forKey:extendingExpiration:)`` reads it) turned into a value by
    /// `transform`, which runs as a job of `executor`; nil when there is no entry. A backend whose reads already run
    /// on that executor reads and transforms in one job: a disk hit's read and decode then cost one hand-over
    /// between threads, not two.
    ///
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - extendingExpiration: What this read does to the entry's expiry; nil for the backend's default.
    ///   - executor: Where `transform` runs.
    ///   - transform: Blocking work on the entry (a decode).
    func cachedEntry<T: Sendable>(
        forKey key: String, extendingExpiration: ExpirationExtending?, transformedOn executor: BoundedExecutor,
        _ transform: @escaping @Sendable (DataCacheEntry) throws -> T
    ) async throws -> T?

    /// What is known about the entry under `key`, without reading its bytes; nil when there is none or it expired.
    ///
    /// - Parameter key: The entry's key.
    func cachedMetadata(forKey key: String) async throws -> DataCacheMetadata?

    /// Stores `data` under `key`, replacing what was there, all or nothing: a reader sees the old entry or
    /// the new one, never part of either.
    ///
    /// - Parameters:
    ///   - data: The bytes.
    ///   - key: The entry's key.
    ///   - expiration: When the entry expires; nil for the backend's default.
    ///   - validators: The HTTP validators to keep with it.
    func storeData(_ data: Data, forKey key: String, expiration: StorageExpiration?, validators: HTTPValidators) async throws

    /// Records that the entry under `key` is still current (a `304 Not Modified`): new validators, expiry
    /// and creation date, same bytes.
    ///
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - validators: The merged validators.
    ///   - expiration: The restarted expiry; nil for the backend's default.
    /// - Returns: False when there is no entry under `key`.
    func refreshEntry(forKey key: String, validators: HTTPValidators, expiration: StorageExpiration?) async throws -> Bool

    /// Removes the entry under `key`, if any.
    ///
    /// - Parameter key: The entry's key.
    func removeData(forKey key: String) async throws

    /// Removes every entry.
    func removeAllData() async throws

    /// Removes expired entries, then what a size limit asks; returns what went (backend-defined names).
    func removeExpiredData() async throws -> [String]

    /// Whether an unexpired entry is stored under `key`, without reading its bytes (the prefetcher's skip check, the
    /// cache-type check). A backend that cannot tell (an unreadable index, a cancelled call) answers false.
    ///
    /// - Parameter key: The entry's key.
    func containsData(forKey key: String) async -> Bool

    /// The bytes held by all entries.
    func totalDataSize() async throws -> Int

    /// Makes everything accepted so far durable (buffered bookkeeping such as access times included), so a
    /// process may exit. ``ImageCache/flush()`` calls it after its own pending writes finish.
    func flush() async throws
}

extension DataCaching {
    /// Nothing to write: a backend whose calls are durable when they return.
    public func flush() async throws {}

    /// Reads the entry, then runs `transform` as a job of `executor`: two jobs, for a backend that reads elsewhere.
    public func cachedEntry<T: Sendable>(
        forKey key: String, extendingExpiration: ExpirationExtending?, transformedOn executor: BoundedExecutor,
        _ transform: @escaping @Sendable (DataCacheEntry) throws -> T
    ) async throws -> T? {
        try await readThenTransform(forKey: key, extendingExpiration: extendingExpiration, on: executor, transform)
    }

    /// The two-job form: ``cachedEntry(forKey:extendingExpiration:)``, then `transform` as a job of `executor`.
    package func readThenTransform<T: Sendable>(
        forKey key: String, extendingExpiration: ExpirationExtending?, on executor: BoundedExecutor,
        _ transform: @escaping @Sendable (DataCacheEntry) throws -> T
    ) async throws -> T? {
        guard let entry = try await cachedEntry(forKey: key, extendingExpiration: extendingExpiration) else { return nil }
        return try await executor.run { _ in try transform(entry) }
    }
}

/// One entry of a ``DataCaching`` backend: its bytes and what is known about them.
public struct DataCacheEntry: Sendable {
    /// The stored bytes, exactly as stored.
    public var data: Data
    /// Dates, size and validators.
    public var metadata: DataCacheMetadata

    /// An entry.
    ///
    /// - Parameters:
    ///   - data: The bytes.
    ///   - metadata: What is known about them.
    public init(data: Data, metadata: DataCacheMetadata) {
        self.data = data
        self.metadata = metadata
    }
}

/// What a ``DataCaching`` backend knows about an entry.
public struct DataCacheMetadata: Sendable, Equatable {
    /// The key it was stored under.
    public var key: String
    /// Size of the bytes.
    public var size: Int
    /// When it was stored or last revalidated (a `304` restarts its age).
    public var created: Date
    /// When it was last read or stored.
    public var lastAccess: Date
    /// When it expires (`Date.distantFuture` for entries that never do).
    public var expiration: Date
    /// The HTTP validators stored with it.
    public var validators: HTTPValidators

    /// Metadata with the given values.
    ///
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - size: Size of the bytes.
    ///   - created: When it was stored or last revalidated.
    ///   - lastAccess: When it was last read or stored.
    ///   - expiration: When it expires.
    ///   - validators: The HTTP validators kept with it.
    public init(key: String, size: Int, created: Date, lastAccess: Date, expiration: Date, validators: HTTPValidators) {
        self.key = key
        self.size = size
        self.created = created
        self.lastAccess = lastAccess
        self.expiration = expiration
        self.validators = validators
    }

    /// True when ``expiration`` is not after `now`.
    ///
    /// - Parameter now: The time to compare with.
    public func isExpired(at now: Date) -> Bool { expiration <= now }
}
