#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The data cache port over the SQLite-indexed files: every call runs the synchronous method of the same
/// meaning as a job of the storage's ``DiskStorage/Config/ioExecutor``, so SQLite and file I/O never block
/// Swift's cooperative pool.
extension DiskStorage: DataCaching {
    /// The clock of ``DiskStorage/Config/clock``.
    public var clock: CacheClock { config.clock }

    /// ``entry(forKey:extendingExpiration:)`` on the I/O executor.
    public func cachedEntry(forKey key: String, extendingExpiration: ExpirationExtending?) async throws -> DataCacheEntry? {
        try await onIOExecutor {
            try self.entry(forKey: key, extendingExpiration: extendingExpiration).map {
                DataCacheEntry(data: $0.data, metadata: $0.metadata.dataCacheMetadata)
            }
        }
    }

    /// ``entry(forKey:extendingExpiration:)`` and `transform` in one job of the I/O executor when `executor` is that
    /// executor (a disk hit read and decoded with one hand-over between threads), else the read there and `transform`
    /// as a job of `executor`. Errors `transform` throws reach the caller as they are.
    public func cachedEntry<T: Sendable>(
        forKey key: String, extendingExpiration: ExpirationExtending?, transformedOn executor: BoundedExecutor,
        _ transform: @escaping @Sendable (DataCacheEntry) throws -> T
    ) async throws -> T? {
        guard executor === config.ioExecutor else {
            return try await readThenTransform(forKey: key, extendingExpiration: extendingExpiration, on: executor, transform)
        }
        let transformed: Result<T, any Error>? = try await onIOExecutor {
            guard let (data, metadata) = try self.entry(forKey: key, extendingExpiration: extendingExpiration) else { return nil }
            // The transform's own errors pass around onIOExecutor's mapping, which would call them read failures.
            return Result { try transform(DataCacheEntry(data: data, metadata: metadata.dataCacheMetadata)) }
        }
        return try transformed?.get()
    }

    /// ``metadata(forKey:)`` on the I/O executor.
    public func cachedMetadata(forKey key: String) async throws -> DataCacheMetadata? {
        try await onIOExecutor { try self.metadata(forKey: key)?.dataCacheMetadata }
    }

    /// ``store(_:forKey:expiration:validators:)`` on the I/O executor (the crash-safe write protocol).
    public func storeData(_ data: Data, forKey key: String, expiration: StorageExpiration?, validators: HTTPValidators) async throws {
        try await onIOExecutor { try self.store(data, forKey: key, expiration: expiration, validators: validators) }
    }

    /// ``refresh(forKey:validators:expiration:)`` on the I/O executor.
    public func refreshEntry(forKey key: String, validators: HTTPValidators, expiration: StorageExpiration?) async throws -> Bool {
        try await onIOExecutor { try self.refresh(forKey: key, validators: validators, expiration: expiration) }
    }

    /// ``remove(forKey:)`` on the I/O executor.
    public func removeData(forKey key: String) async throws {
        try await onIOExecutor { try self.remove(forKey: key) }
    }

    /// ``removeAll()`` on the I/O executor.
    public func removeAllData() async throws {
        try await onIOExecutor { try self.removeAll() }
    }

    /// ``removeExpired()`` then ``enforceSizeLimit()`` on the I/O executor; the file names removed.
    public func removeExpiredData() async throws -> [String] {
        try await onIOExecutor { try self.removeExpired() + self.enforceSizeLimit() }
    }

    /// ``isCached(forKey:)`` (one indexed SQLite lookup) on the I/O executor; false when the call is cancelled.
    public func containsData(forKey key: String) async -> Bool {
        (try? await onIOExecutor { self.isCached(forKey: key) }) ?? false
    }

    /// ``totalSize()`` on the I/O executor.
    public func totalDataSize() async throws -> Int {
        try await onIOExecutor { try self.totalSize() }
    }

    /// Waits for a background sweep or index checkpoint under way, then ``flushAccessTimes()`` on the I/O executor:
    /// reads buffer their access times and expiry extensions.
    public func flush() async throws {
        await waitForSweeps()
        await checkpointer.waitUntilIdle()
        try await onIOExecutor { try self.flushAccessTimes() }
    }

    /// Runs blocking work as a job of the I/O executor; errors other than ``MagpieError`` become a read failure.
    private func onIOExecutor<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await config.ioExecutor.run { _ in try work() }
        } catch let error as MagpieError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw MagpieError.cacheFailed(reason: .cannotRead(path: directoryURL.path, message: "\(error)"))
        }
    }
}
