import Dispatch
import Logging
import Metrics
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The two-level image cache: decoded images in a memory cache, their bytes in a data cache. Reads
/// go memory → data cache (read, then decode on the cache's ``codingExecutor``, then promote to
/// memory); concurrent reads of one key that miss memory share that one read and decode.
///
/// Both layers are ports: any ``MemoryCaching`` and any ``DataCaching`` (or none). The defaults are
/// ``MemoryStorage`` and ``DiskStorage``. A processed variant is stored under `key@processorIdentifier`
/// (``CacheKey``), so a thumbnail never collides with the original. If the disk cache cannot be opened
/// (unwritable folder), the cache runs on memory alone and says why in ``diskError``.
public final class ImageCache: Sendable {
    /// The shared cache named `default`, on disk in ``DiskStorage/Config/defaultDirectory``, with the default limits.
    public static let `default` = ImageCache(name: "default")

    /// The cache's name (its disk folder's name).
    public let name: String
    /// The memory layer: decoded images. A cache made without one (`memoryCache: nil`) has a layer that keeps nothing.
    public let memoryCache: any MemoryCaching
    /// The data layer: encoded bytes with their validators; nil for a memory-only cache.
    public let dataCache: (any DataCaching)?
    /// Why there is no data cache, when opening the disk cache failed; nil when there is one or none was asked for.
    public let diskError: MagpieError?
    /// Where disk hits are decoded and images are serialized for the data cache. Default ``BoundedExecutor/io``: cache
    /// traffic does not queue behind the misses' decoding and processing on ``BoundedExecutor/processing`` (a prefetch
    /// of 1,000 small images ran ~14 % slower when the thumbnails' encodes waited there).
    public let codingExecutor: BoundedExecutor

    /// The memory layer when it is the built-in ``MemoryStorage``, under Kingfisher's name (its limits change on a
    /// live cache: `cache.memoryStorage?.config.totalCostLimit = 64 << 20`); nil for another ``MemoryCaching``.
    public var memoryStorage: MemoryStorage? { memoryCache as? MemoryStorage }
    /// The data layer when it is the built-in ``DiskStorage`` (files, verification); nil for another backend or none.
    public var diskStorage: DiskStorage? { dataCache as? DiskStorage }

    /// The disk-read stage: one read + decode per memory key (variant and decode variant) at a time.
    private let diskReads = SharedWork<String, Image?>()
    /// Disk writes running in the background; ``flush()`` waits for them.
    private let pendingWrites = PendingWork()
    private let logger: Logger
    private let counters: CacheCounters

    /// A cache named `name` with the given memory configuration and disk configuration
    /// (default: a ``DiskStorage`` named `name` in ``DiskStorage/Config/defaultDirectory``).
    ///
    /// Never fails: when the disk cache cannot be opened, the cache works from memory alone,
    /// ``diskStorage`` is nil and ``diskError`` says why (a warning is logged too).
    /// - Parameters:
    ///   - name: The cache's name; also its folder name and its label in logs and metrics.
    ///   - memoryConfig: Limits and expiry of the memory layer.
    ///   - diskConfig: The disk layer's setup; nil (the default) for `DiskStorage.Config(name: name)`.
    public convenience init(name: String, memoryConfig: MemoryStorage.Config = .init(), diskConfig: DiskStorage.Config? = nil) {
        let config = diskConfig ?? DiskStorage.Config(name: name)
        let disk: DiskStorage?
        let failure: MagpieError?
        do {
            disk = try DiskStorage(config: config)
            failure = nil
        } catch {
            disk = nil
            failure = error as? MagpieError
                ?? .cacheFailed(reason: .cannotCreateDirectory(path: config.directory.path, message: "\(error)"))
        }
        self.init(name: name, memoryCache: MemoryStorage(config: memoryConfig), dataCache: disk, dataCacheError: failure)
    }

    /// A cache named `name` in its own folder `cacheDirectoryURL/name` (Kingfisher's shape): the name is given once.
    ///
    /// - Parameters:
    ///   - name: The cache's name: its folder below `cacheDirectoryURL`, its label in logs and metrics.
    ///   - cacheDirectoryURL: The parent folder; nil for ``DiskStorage/Config/defaultDirectory``.
    ///   - memoryConfig: Limits and expiry of the memory layer.
    ///   - sizeLimit: The disk layer's size limit in bytes (0: none); nil (the default) for
    ///     ``DiskStorage/Config/defaultSizeLimit(forFolder:)``.
    public convenience init(
        name: String, cacheDirectoryURL: URL?, memoryConfig: MemoryStorage.Config = .init(), sizeLimit: Int? = nil
    ) {
        self.init(
            name: name, memoryConfig: memoryConfig,
            diskConfig: DiskStorage.Config(name: name, directory: cacheDirectoryURL, sizeLimit: sizeLimit))
    }

    /// A cache over existing storages (`diskStorage` nil: memory only).
    ///
    /// - Parameters:
    ///   - name: The cache's name, used in logs and metrics.
    ///   - memoryStorage: The memory layer.
    ///   - diskStorage: The disk layer, or nil for a memory-only cache.
    ///   - diskError: Why there is no disk layer, reported by ``diskError`` (and logged); nil by default.
    public convenience init(name: String, memoryStorage: MemoryStorage, diskStorage: DiskStorage?, diskError: MagpieError? = nil) {
        self.init(name: name, memoryCache: memoryStorage, dataCache: diskStorage, dataCacheError: diskError)
    }

    /// A cache over any memory cache and any data cache (or none): the ports' way in.
    ///
    /// - Parameters:
    ///   - name: The cache's name, used in logs and metrics.
    ///   - memoryCache: The memory layer, for example a ``MemoryStorage``; nil for a data-only cache (a server that
    ///     keeps its encoded results in memory instead of decoded sources).
    ///   - dataCache: The data layer, for example a ``DiskStorage``; nil for a memory-only cache.
    ///   - dataCacheError: Why there is no data layer, reported by ``diskError`` (and logged); nil by default.
    ///   - codingExecutor: Where disk hits are decoded and images serialized; ``BoundedExecutor/io`` by default.
    public init(
        name: String, memoryCache: (any MemoryCaching)?, dataCache: (any DataCaching)?, dataCacheError: MagpieError? = nil,
        codingExecutor: BoundedExecutor = .io
    ) {
        self.name = name
        self.memoryCache = memoryCache ?? NoMemoryCache()
        self.dataCache = dataCache
        self.diskError = dataCacheError
        self.codingExecutor = codingExecutor
        logger = Logger(label: "magpie.cache.\(name)")
        counters = CacheCounters(cache: name)
        if let dataCacheError { logger.warning("disk cache unavailable, using memory only", metadata: ["error": "\(dataCacheError)"]) }
        if let diskStorage { Self.observe(diskStorage, counters: counters, logger: logger) }
    }

    /// Turns the disk cache's events into metrics. The task ends with the storage's event stream.
    private static func observe(_ disk: DiskStorage, counters: CacheCounters, logger: Logger) {
        let events = disk.events()
        Task { [weak disk] in
            for await event in events {
                switch event {
                case .stored(_, let size): counters.bytesWritten.increment(by: size)
                case .evicted(let names):
                    counters.evictions.increment(by: names.count)
                    logger.debug("evicted to respect the size limit", metadata: ["count": "\(names.count)"])
                case .cleaned(let names): counters.expirations.increment(by: names.count)
                case .removed: break
                }
                // A write or an eviction has just read the total under the index's lock; other events ask for it.
                let known: Int? = switch event {
                case .stored, .evicted: disk?.lastKnownTotalSize
                case .removed, .cleaned: nil
                }
                if let bytes = known ?? (try? disk?.totalSize()) { counters.diskBytes.record(bytes) }
            }
        }
    }

    /// The memory key of an image decoded with `decodingOptions`: decoding options that change
    /// pixels (a target size, say) get their own memory entry.
    package static func memoryKey(_ computed: String, decodingOptions: ImageDecodingOptions) -> String {
        CacheKey.memory(computed, decodingVariant: decodingOptions.variantIdentifier)
    }

    /// The key an image is stored under: `key@processorIdentifier`, or `key` for the original.
    ///
    /// - Parameters:
    ///   - key: The source's cache key.
    ///   - processorIdentifier: The processor's ``ImageProcessor/identifier``; `""` for the unprocessed image.
    /// - Returns: The combined key.
    public static func computedKey(_ key: String, processorIdentifier: String) -> String {
        CacheKey.stored(key, variant: processorIdentifier)
    }

    // MARK: Storing

    /// Stores `image` in memory and (when `toDisk`) its serialized bytes on disk.
    ///
    /// The memory store happens before this suspends; the disk write runs on the cache's I/O queue
    /// and is finished when this returns.
    /// - Parameters:
    ///   - image: The image to cache.
    ///   - original: The bytes the image was decoded from, which the serializer may keep as they are.
    ///   - key: The source's cache key.
    ///   - processorIdentifier: The identifier of the processor that made `image`; `""` (the default) for an original.
    ///   - cacheSerializer: Turns the image into the bytes written to disk.
    ///   - toDisk: False to store in memory only.
    ///   - memoryExpiration: The memory entry's expiration; nil for the memory layer's default.
    ///   - diskExpiration: The disk entry's expiration; nil for the disk layer's default.
    ///   - validators: HTTP validators kept with the disk entry for revalidation.
    ///   - decodingOptions: The options the image was decoded with: a retrieval with the same
    ///     options finds it in memory (a downsampled decode has its own memory entry).
    /// - Returns: The per-layer outcome; a disk failure (no disk cache, serialization, a full disk) is
    ///   reported there as a ``MagpieError/cacheFailed(reason:)``, and logged. Never throws.
    @discardableResult
    public func store(
        _ image: Image, original: Data? = nil, forKey key: String, processorIdentifier: String = "",
        cacheSerializer: any CacheSerializer = DefaultCacheSerializer.default, toDisk: Bool = true,
        memoryExpiration: StorageExpiration? = nil, diskExpiration: StorageExpiration? = nil,
        validators: HTTPValidators = .init(), decodingOptions: ImageDecodingOptions = .default
    ) async -> CacheStoreResult {
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        memoryCache.storeImage(image, forKey: Self.memoryKey(computed, decodingOptions: decodingOptions), expiration: memoryExpiration)
        guard toDisk else { return CacheStoreResult(memoryCacheResult: .success(()), diskCacheResult: nil) }
        let disk = await storeInDataCache(
            image, original: original, computedKey: computed, cacheSerializer: cacheSerializer, expiration: diskExpiration,
            validators: validators)
        return CacheStoreResult(memoryCacheResult: .success(()), diskCacheResult: disk)
    }

    /// The data-cache half of a store: serializes `image` on the ``codingExecutor`` and writes it under the
    /// already computed key. The pipeline calls it after its own memory store, so a miss stores into memory once
    /// (a second store could bring back an entry removed in between). Failures are counted and logged.
    package func storeInDataCache(
        _ image: Image, original: Data?, computedKey computed: String, cacheSerializer: any CacheSerializer,
        expiration: StorageExpiration?, validators: HTTPValidators
    ) async -> Result<Void, MagpieError> {
        let disk: Result<Void, MagpieError>
        do {
            guard let dataCache else { throw noDataCache }
            let data: Data
            do {
                data = try await codingExecutor.run { isCancelled in
                    try cacheSerializer.data(with: image, original: original, isCancelled: isCancelled)
                }
            } catch is CancellationError {
                throw MagpieError.cacheFailed(reason: .cannotWrite(path: computed, message: "cancelled", diskFull: false))
            } catch {
                throw MagpieError.cacheFailed(reason: .serializationFailed(key: computed, message: "\(error)"))
            }
            try await dataCache.storeData(data, forKey: computed, expiration: expiration, validators: validators)
            disk = .success(())
        } catch {
            disk = .failure(Self.cacheError(error, path: computed))
        }
        if case .failure(let error) = disk {
            counters.errors.increment()
            logger.warning("disk store failed", metadata: ["key": "\(computed)", "error": "\(error)"])
        }
        return disk
    }

    /// Runs a data-cache write of the entries under `keys` (computed keys), counted until it ends so that ``flush()``
    /// can wait for it, and registered under those keys so that reads of them wait for it rather than miss.
    ///
    /// - Parameters:
    ///   - keys: The computed keys the write stores.
    ///   - awaited: True to run it in the calling task (`.waitForCache`), false to run it in the background.
    ///   - write: The write.
    package func write(keys: [String], awaited: Bool, _ write: @escaping @Sendable () async -> Void) async {
        if awaited { await pendingWrites.run(keys: keys, write) } else { pendingWrites.start(keys: keys, write) }
    }

    /// Returns once no write of this cache to the data-layer entry `computed` is running: a read that follows finds
    /// what the write stored. Without a write in flight, this is one lock and one lookup.
    package func waitForWrites(toKey computed: String) async {
        await pendingWrites.waitUntilFinished(key: computed)
    }

    /// Waits until every disk write accepted so far has finished (the pipeline writes in the background unless
    /// `.waitForCache` is given), then asks the data cache to make its bookkeeping durable. Call it before a
    /// process exits: a short job that returns right after a retrieval otherwise loses the write. Failures were
    /// already logged by the writes themselves; a failing flush of the data cache is logged here.
    public func flush() async {
        await pendingWrites.waitUntilIdle()
        do {
            try await dataCache?.flush()
        } catch {
            logger.warning("data cache flush failed", metadata: ["error": "\(error)"])
        }
    }

    /// Disk writes that have started and not finished.
    public var pendingWriteCount: Int { pendingWrites.count }

    /// Stores already encoded bytes on disk only (for callers that cache what they downloaded).
    ///
    /// The bytes are not checked; memory is not touched.
    /// - Parameters:
    ///   - data: The encoded image.
    ///   - key: The source's cache key.
    ///   - processorIdentifier: The identifier of the processor the bytes belong to; `""` (the default) for an
    ///     original.
    ///   - expiration: The entry's expiration; nil for the disk layer's default.
    ///   - validators: HTTP validators kept for revalidation.
    /// - Throws: ``diskError`` (or a ``MagpieError/CacheFailureReason/cannotWrite(path:message:diskFull:)``)
    ///   when there is no disk cache, or the ``DiskStorage/store(_:forKey:expiration:validators:)`` error.
    public func storeToDisk(
        _ data: Data, forKey key: String, processorIdentifier: String = "", expiration: StorageExpiration? = nil,
        validators: HTTPValidators = .init()
    ) async throws {
        guard let dataCache else { throw noDataCache }
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        do {
            try await dataCache.storeData(data, forKey: computed, expiration: expiration, validators: validators)
        } catch {
            throw Self.cacheError(error, path: computed)
        }
    }

    /// The error of a write to a cache without a data layer: why it has none.
    private var noDataCache: MagpieError {
        diskError ?? .cacheFailed(reason: .cannotWrite(path: "", message: "no disk cache", diskFull: false))
    }

    /// Any error of a data cache as a ``MagpieError`` (a backend of the user's may throw anything).
    private static func cacheError(_ error: any Error, path: String) -> MagpieError {
        error as? MagpieError ?? .cacheFailed(reason: .cannotRead(path: path, message: "\(error)"))
    }

    /// Completion-handler form of
    /// ``store(_:original:forKey:processorIdentifier:cacheSerializer:toDisk:memoryExpiration:diskExpiration:validators:decodingOptions:)``
    /// with the default expirations, no validators and default decoding options.
    ///
    /// Returns at once; the memory store may happen a moment later.
    /// - Parameters:
    ///   - image: The image to cache.
    ///   - original: The bytes the image was decoded from, if known.
    ///   - key: The source's cache key.
    ///   - processorIdentifier: The identifier of the processor that made `image`; `""` for an original.
    ///   - cacheSerializer: Turns the image into the bytes written to disk.
    ///   - toDisk: False to store in memory only.
    ///   - callbackQueue: Where `completion` runs (default: a global queue).
    ///   - completionHandler: Receives the per-layer outcome; may be nil.
    public func store(
        _ image: Image, original: Data? = nil, forKey key: String, processorIdentifier: String = "",
        cacheSerializer: any CacheSerializer = DefaultCacheSerializer.default, toDisk: Bool = true,
        callbackQueue: DispatchQueue = .global(), completionHandler: (@Sendable (CacheStoreResult) -> Void)? = nil
    ) {
        pendingWrites.start(keys: toDisk ? [Self.computedKey(key, processorIdentifier: processorIdentifier)] : []) {
            let result = await self.store(image, original: original, forKey: key, processorIdentifier: processorIdentifier,
                                          cacheSerializer: cacheSerializer, toDisk: toDisk)
            if let completionHandler { callbackQueue.async { completionHandler(result) } }
        }
    }

    // MARK: Retrieving

    /// Looks `key` up in memory, then on disk (decoding with `options.decodingOptions` and
    /// promoting the image to memory).
    ///
    /// - Parameters:
    ///   - key: The source's cache key.
    ///   - options: The processor variant, decoding options, serializer and expiry handling.
    /// - Returns: Where the image was found, or ``ImageCacheResult/none``; a miss is not an error.
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the disk entry exists but cannot be read, or
    ///   ``MagpieError/decodingFailed(reason:)`` when its bytes do not decode.
    public func retrieveImage(forKey key: String, options: ImageCacheRetrievalOptions = .init()) async throws -> ImageCacheResult {
        let computed = Self.computedKey(key, processorIdentifier: options.processorIdentifier)
        let memoryKey = Self.memoryKey(computed, decodingOptions: options.decodingOptions)
        if let image = memoryImage(forMemoryKey: memoryKey, extending: options.memoryAccessExtending) { return .memory(image) }
        return try await diskImage(computed: computed, memoryKey: memoryKey, options: options)
    }

    /// The memory miss of `retrieveImage`, counted, then the disk layer (the decoded image is
    /// promoted to memory). Callers that already looked in memory start here.
    package func diskImage(computed: String, memoryKey: String, options: ImageCacheRetrievalOptions) async throws -> ImageCacheResult {
        counters.memoryMisses.increment()
        guard !options.memoryOnly, dataCache != nil else { return .none }
        guard let image = try await sharedDiskDecode(computed, memoryKey: memoryKey, options: options) else {
            counters.diskMisses.increment()
            return .none
        }
        counters.diskHits.increment()
        if options.promotesToMemory {
            memoryCache.storeImage(image, forKey: memoryKey, expiration: options.memoryExpiration)
        }
        return .disk(image)
    }

    /// Completion-handler form of ``retrieveImage(forKey:options:)`` in Kingfisher's shape
    /// (`cache.retrieveImage(forKey: key) { result in … }`), calling back on `callbackQueue`.
    ///
    /// - Parameters:
    ///   - key: The source's cache key.
    ///   - options: The processor variant, decoding options, serializer and expiry handling; nil for the defaults.
    ///   - callbackQueue: Where `completionHandler` runs (default: a global queue).
    ///   - completionHandler: Receives where the image was found, or the error; a miss is `.success(.none)`.
    public func retrieveImage(
        forKey key: String, options: ImageCacheRetrievalOptions? = nil, callbackQueue: DispatchQueue = .global(),
        completionHandler: @escaping @Sendable (Result<ImageCacheResult, MagpieError>) -> Void
    ) {
        Task {
            let result: Result<ImageCacheResult, MagpieError>
            do {
                result = .success(try await retrieveImage(forKey: key, options: options ?? .init()))
            } catch {
                result = .failure(error as? MagpieError ?? .cacheFailed(reason: .cannotRead(path: key, message: "\(error)")))
            }
            callbackQueue.async { completionHandler(result) }
        }
    }

    /// The image under an already computed memory key, counted as a memory hit when found (a
    /// miss is counted by `diskImage`, which follows).
    package func memoryImage(forMemoryKey memoryKey: String, extending: ExpirationExtending?) -> Image? {
        guard let image = memoryCache.image(forKey: memoryKey, extendingExpiration: extending) else { return nil }
        counters.memoryHits.increment()
        return image
    }

    /// The image in memory, without touching the disk; only the entry decoded with default
    /// ``ImageDecodingOptions`` is looked at. A hit counts as a read of the entry (LRU order, expiry).
    ///
    /// - Parameters:
    ///   - key: The source's cache key.
    ///   - processorIdentifier: The processor variant; `""` (the default) for the original.
    /// - Returns: The image, or nil when it is not in memory.
    public func retrieveImageInMemoryCache(forKey key: String, processorIdentifier: String = "") -> Image? {
        memoryCache.image(forKey: Self.computedKey(key, processorIdentifier: processorIdentifier), extendingExpiration: nil)
    }

    /// One disk read + decode per key and variant at a time, however many callers ask: the first
    /// starts it, the others join (they share a decode only when they want the same variant, `memoryKey`).
    private func sharedDiskDecode(_ computed: String, memoryKey: String, options: ImageCacheRetrievalOptions) async throws -> Image? {
        try await diskReads.value(for: memoryKey) { _ in
            try await self.decodeFromDisk(computed, options: options)
        }
    }

    private func decodeFromDisk(_ computed: String, options: ImageCacheRetrievalOptions) async throws -> Image? {
        do {
            await waitForWrites(toKey: computed)
            return try await dataCache?.cachedEntry(
                forKey: computed, extendingExpiration: options.diskAccessExtending, transformedOn: codingExecutor
            ) { entry in try options.cacheSerializer.image(with: entry.data, options: options.decodingOptions) }
        } catch is CancellationError {
            // Every caller left: nothing is wrong with the entry.
            throw CancellationError()
        } catch {
            counters.errors.increment()
            logger.debug("disk entry unusable", metadata: ["key": "\(computed)", "error": "\(error)"])
            throw Self.cacheError(error, path: computed)
        }
    }

    // MARK: Inspecting and removing

    /// Where the image for `key` is cached, without reading it. The memory layer is checked for
    /// the variant decoded with `decodingOptions`, at once; the data layer only on a memory miss, and asynchronously
    /// (for a ``DiskStorage``, an index lookup on its I/O executor, never on the caller's thread).
    ///
    /// - Parameters:
    ///   - key: The source's cache key.
    ///   - processorIdentifier: The processor variant; `""` (the default) for the original.
    ///   - decodingOptions: The decode variant looked for in memory.
    /// - Returns: ``CacheType/memory`` before ``CacheType/disk``; ``CacheType/none`` when in neither.
    public func imageCachedType(
        forKey key: String, processorIdentifier: String = "", decodingOptions: ImageDecodingOptions = .default
    ) async -> CacheType {
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        if memoryCache.containsImage(forKey: Self.memoryKey(computed, decodingOptions: decodingOptions)) { return .memory }
        await waitForWrites(toKey: computed)
        if let dataCache, await dataCache.containsData(forKey: computed) { return .disk }
        return .none
    }

    /// Whether the image for `key` is in memory (default decode variant) or in the data layer; see
    /// ``imageCachedType(forKey:processorIdentifier:decodingOptions:)``. For a check that never leaves memory,
    /// ``retrieveImageInMemoryCache(forKey:processorIdentifier:)``.
    ///
    /// - Parameters:
    ///   - key: The source's cache key.
    ///   - processorIdentifier: The processor variant; `""` (the default) for the original.
    public func isCached(forKey key: String, processorIdentifier: String = "") async -> Bool {
        await imageCachedType(forKey: key, processorIdentifier: processorIdentifier).cached
    }

    /// Removes the image for `key` from the chosen layers. In memory only the default decode
    /// variant is removed; variants decoded to a target size expire on their own.
    ///
    /// - Parameters:
    ///   - key: The source's cache key.
    ///   - processorIdentifier: The processor variant; `""` (the default) for the original.
    ///   - fromMemory: Remove the memory entry (default true).
    ///   - fromDisk: Remove the disk entry (default true).
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the disk index cannot be updated.
    public func removeImage(forKey key: String, processorIdentifier: String = "", fromMemory: Bool = true, fromDisk: Bool = true) async throws {
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        if fromMemory { memoryCache.removeImage(forKey: computed) }
        if fromDisk, let dataCache { try await withCacheErrors(computed) { try await dataCache.removeData(forKey: computed) } }
    }

    /// Empties the memory cache (all keys and variants).
    public func clearMemoryCache() { memoryCache.removeAllImages() }

    /// Empties the disk cache; does nothing without one.
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be updated.
    public func clearDiskCache() async throws {
        guard let dataCache else { return }
        try await withCacheErrors(name) { try await dataCache.removeAllData() }
    }

    /// Removes expired images from memory now, rather than at the next background sweep.
    public func cleanExpiredMemoryCache() { _ = memoryCache.removeExpiredImages() }

    /// Removes expired entries from disk, then enforces the size limit.
    ///
    /// - Returns: The file names removed (expired first, then evicted); empty without a disk cache.
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read or updated.
    @discardableResult
    public func cleanExpiredDiskCache() async throws -> [String] {
        guard let dataCache else { return [] }
        return try await withCacheErrors(name) { try await dataCache.removeExpiredData() }
    }

    /// Payload bytes of all disk entries (the index and temporary files not counted); 0 without a disk cache.
    ///
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read.
    public func diskStorageSize() async throws -> Int {
        guard let dataCache else { return 0 }
        return try await withCacheErrors(name) { try await dataCache.totalDataSize() }
    }

    /// Kingfisher's name for ``diskStorageSize()``: payload bytes of all disk entries; 0 without a disk cache.
    ///
    /// - Returns: The size in bytes.
    /// - Throws: ``MagpieError/cacheFailed(reason:)`` when the index cannot be read.
    public func calculateDiskStorageSize() async throws -> UInt {
        UInt(max(0, try await diskStorageSize()))
    }

    /// Completion-handler form of ``calculateDiskStorageSize()``, as in Kingfisher.
    ///
    /// - Parameters:
    ///   - callbackQueue: Where `completion` runs (default: a global queue).
    ///   - completion: Receives the size in bytes, or the error.
    public func calculateDiskStorageSize(
        callbackQueue: DispatchQueue = .global(), completion: @escaping @Sendable (Result<UInt, MagpieError>) -> Void
    ) {
        Task {
            let result: Result<UInt, MagpieError>
            do {
                result = .success(try await calculateDiskStorageSize())
            } catch {
                result = .failure(Self.cacheError(error, path: name))
            }
            callbackQueue.async { completion(result) }
        }
    }

    /// The path of the file that holds (or would hold) the image for `key`; nil without a disk cache.
    ///
    /// - Parameters:
    ///   - key: The source's cache key.
    ///   - processorIdentifier: The processor variant; `""` (the default) for the original.
    public func cachePath(forKey key: String, processorIdentifier: String = "") -> String? {
        diskStorage?.fileURL(forKey: Self.computedKey(key, processorIdentifier: processorIdentifier)).path
    }

    /// Runs a data cache call, turning a foreign error into a ``MagpieError``.
    private func withCacheErrors<T: Sendable>(_ path: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw Self.cacheError(error, path: path)
        }
    }}

/// swift-metrics instruments for one cache (dimension `cache`, and `layer`): hits, misses,
/// errors, disk evictions, expired removals, bytes written and bytes held. A no-op until
/// the application bootstraps a metrics backend.
struct CacheCounters: Sendable {
    let memoryHits: Counter
    let memoryMisses: Counter
    let diskHits: Counter
    let diskMisses: Counter
    let errors: Counter
    let evictions: Counter
    let expirations: Counter
    let bytesWritten: Counter
    let diskBytes: Gauge

    init(cache: String) {
        let dimension = [("cache", cache)]
        memoryHits = Counter(label: "magpie_cache_hits", dimensions: dimension + [("layer", "memory")])
        memoryMisses = Counter(label: "magpie_cache_misses", dimensions: dimension + [("layer", "memory")])
        diskHits = Counter(label: "magpie_cache_hits", dimensions: dimension + [("layer", "disk")])
        diskMisses = Counter(label: "magpie_cache_misses", dimensions: dimension + [("layer", "disk")])
        errors = Counter(label: "magpie_cache_errors", dimensions: dimension)
        evictions = Counter(label: "magpie_cache_evictions", dimensions: dimension + [("layer", "disk")])
        expirations = Counter(label: "magpie_cache_expired_removed", dimensions: dimension + [("layer", "disk")])
        bytesWritten = Counter(label: "magpie_cache_bytes_written", dimensions: dimension + [("layer", "disk")])
        diskBytes = Gauge(label: "magpie_cache_bytes", dimensions: dimension + [("layer", "disk")])
    }
}
