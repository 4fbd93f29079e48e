import MagpieCore
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The retrieval of one source: freshness → caches → miss path (original cache or download,
/// decode, process, store), the miss path shared by concurrent requests for the same variant.
extension ImageManager {
    /// - Parameter memoryChecked: The caller already looked for this variant in memory and missed, so the lookup is
    ///   not repeated (a retrieval counts one memory miss, not two).
    func retrieve(
        _ source: Source, originalSource: Source, options: MagpieParsedOptions, progress: DownloadProgressHandler?,
        memoryChecked: Bool = false
    ) async throws -> RetrieveImageResult {
        var request = RetrievalRequest(manager: self, source: source, options: options)
        var skipCaches = options.forceRefresh
        var revalidation: DownloadMetrics?
        var served = RetrieveImageResult.Served.fresh
        var storedValidators: HTTPValidators?
        // The freshness check found nothing on disk: the lookup below need not ask again.
        var absentFromDisk = false
        if !skipCaches, !options.onlyFromCache, options.revalidate || options.respectCacheControl,
            case .network(let resource) = source
        {
            let lookup = options.respectCacheControl ? try await varyAlternative(request) : FreshnessLookup(request: request)
            request = lookup.request
            switch try await freshness(lookup, url: resource.downloadURL, progress: progress) {
            case .fresh(let how, let validators):
                served = how
                storedValidators = validators
            case .stale: skipCaches = true
            case .absent: absentFromDisk = true
            case .notModified(let metrics, let validators):
                revalidation = metrics
                storedValidators = validators
            case .replaced(let result): return deliver(result, request: request, originalSource: originalSource)
            }
        }
        if !skipCaches,
            let hit = await cachedVariant(request, memoryChecked: memoryChecked && revalidation == nil, readsDisk: !absentFromDisk)
        {
            var result = RetrieveImageResult(
                image: hit.image, cacheType: hit.cacheType, source: source, originalSource: originalSource,
                originalData: nil, revalidated: revalidation != nil, downloadMetrics: revalidation,
                dataCache: request.cache.dataCache,
                dataCacheKey: ImageCache.computedKey(request.key, processorIdentifier: request.variantIdentifier),
                validators: storedValidators)
            if revalidation == nil { result.served = served }
            return deliver(result, request: request, originalSource: originalSource)
        }
        var result: RetrieveImageResult
        let priority = TaskPriority(downloadPriority: options.downloadPriority)
        let missSkipsCaches = skipCaches
        let missRequest = request
        // One slot per running miss: downloads cannot run ahead of processing with everybody's bytes in memory.
        let miss: @Sendable (@escaping DownloadProgressHandler) async throws -> RetrieveImageResult = { progress in
            do {
                return try await self.missSlots.withSlot(priority: priority) {
                    try await self.produce(missRequest, skipCaches: missSkipsCaches, progress: progress)
                }
            } catch is CancellationError {
                throw Self.cancelled(source)
            }
        }
        if let key = request.coalescingKey(skipCaches: skipCaches) {
            result = try await variants.value(
                for: key, priority: priority, cancellationError: Self.cancelled(source), progress: progress
            ) { reporter in
                try await miss { reporter.report($0) }
            }
        } else {
            result = try await miss(progress ?? { _ in })
        }
        // Made from a cached original while the entry was served stale: the result is as stale as that original.
        if result.cacheType != .none, case .stale = served { result.served = served }
        return deliver(result, request: request, originalSource: originalSource)
    }

    /// The caller's view of a (possibly shared) result: its own original source, its own modifier.
    private func deliver(_ result: RetrieveImageResult, request: RetrievalRequest, originalSource: Source) -> RetrieveImageResult {
        var result = result
        result.originalSource = originalSource
        if let modifier = request.options.imageModifier { result.image = modifier.modify(result.image) }
        return result
    }

    /// The variant from memory or disk; nil on a miss. An entry whose bytes are damaged is
    /// removed and counts as a miss, so a damaged cache heals by downloading again.
    private func cachedVariant(
        _ request: RetrievalRequest, memoryChecked: Bool, readsDisk: Bool = true
    ) async -> (image: Image, cacheType: CacheType)? {
        let access = request.options.cacheAccess
        if !memoryChecked, access.contains(.memoryReads), let image = request.cache.memoryImage(
            forMemoryKey: request.memoryKey, extending: request.options.memoryCacheAccessExtendingExpiration)
        {
            return (image, .memory)
        }
        guard readsDisk, access.contains(.diskReads) else { return nil }
        do {
            let found = try await request.cache.diskImage(
                computed: ImageCache.computedKey(request.key, processorIdentifier: request.variantIdentifier),
                memoryKey: request.memoryKey, options: request.retrieval)
            return found.image.map { ($0, found.cacheType) }
        } catch {
            // A cancelled read says nothing about the entry; the miss path that follows answers the cancellation.
            if error is CancellationError || Task.isCancelled { return nil }
            // Only damaged bytes are removed: a read error, or limits stricter than this caller's
            // (a decode `tooLarge`), say nothing about the entry, which other callers can still use.
            switch (error as? MagpieError)?.decodingReason {
            case .emptyData?, .unknownFormat?, .corruptData?, .truncatedData?:
                logger.warning("cached image damaged, removing it", metadata: ["key": "\(request.key)", "error": "\(error)"])
                try? await request.cache.removeImage(forKey: request.key, processorIdentifier: request.variantIdentifier)
            default:
                logger.warning("cached image unreadable, treated as a miss", metadata: ["key": "\(request.key)", "error": "\(error)"])
            }
            return nil
        }
    }

    // MARK: Miss path

    /// Makes the variant: from the original cache when it has the original (no download),
    /// else from downloaded or provided bytes; stores it; returns it.
    private func produce(_ request: RetrievalRequest, skipCaches: Bool, progress: @escaping DownloadProgressHandler) async throws -> RetrieveImageResult {
        let options = request.options
        if request.isProcessed, !skipCaches, !options.fromMemoryCacheOrRefresh, let original = try await originalItem(request) {
            let image = try await process(request, original.item, response: nil)
            counters.processedFromOriginal.add(1, ordering: .relaxed)
            if Task.isCancelled { throw Self.cancelled(request.source) }
            await store(request, image: image, data: nil, validators: original.validators, storeOriginal: false)
            return RetrieveImageResult(
                image: image, cacheType: original.cacheType, source: request.source, originalSource: request.source,
                originalData: original.data, revalidated: false, validators: original.validators)
        }
        if options.onlyFromCache { throw MagpieError.cacheFailed(reason: .notCached(key: request.key)) }
        let fetched = try await fetch(request, progress: progress)
        if Task.isCancelled { throw Self.cancelled(request.source) }
        return try await finishDownload(
            request, data: fetched.data, response: fetched.response, validators: fetched.validators, metrics: fetched.metrics)
    }

    /// Decodes, processes and stores fetched bytes. With ``MagpieOption/respectCacheControl``, a `no-store` response
    /// is stored nowhere: the caller (and callers sharing this run) get it, nobody later.
    func finishDownload(
        _ request: RetrievalRequest, data: Data, response: HTTPResponseInfo?, validators: HTTPValidators, metrics: DownloadMetrics?
    ) async throws -> RetrieveImageResult {
        let image: Image
        do {
            image = try await process(request, .data(data), response: response)
        } catch {
            let failure = Self.magpieError(error, source: request.source)
            if case .network(let resource) = request.source, failure.decodingReason != nil {
                failedURLs.record(resource.downloadURL, error: failure)
            }
            throw failure
        }
        if case .network(let resource) = request.source, request.options.retryFailed {
            failedURLs.remove(resource.downloadURL)
        }
        // Nobody waits for a cancelled result: caching it anyway would let a stopped prefetch
        // leave images its summary reports as failed.
        if Task.isCancelled { throw Self.cancelled(request.source) }
        let storable = !request.options.respectCacheControl || HTTPCachePolicy(validators: validators, storedAt: Date()).isStorable
        if storable {
            await store(request, image: image, data: data, validators: validators, storeOriginal: request.options.cacheOriginalImage)
        }
        return RetrieveImageResult(
            image: image, cacheType: .none, source: request.source, originalSource: request.source,
            originalData: data, revalidated: false, downloadMetrics: metrics, validators: validators)
    }

    /// The unprocessed original, decoded in memory or as bytes on disk, from the original cache.
    private func originalItem(_ request: RetrievalRequest) async throws -> (
        item: ImageProcessItem, data: Data?, validators: HTTPValidators, cacheType: CacheType
    )? {
        let originalCache = request.originalCache
        let access = request.options.cacheAccess
        let memoryKey = ImageCache.memoryKey(request.key, decodingOptions: request.decoding)
        if access.contains(.memoryReads), let image = originalCache.memoryCache.image(forKey: memoryKey, extendingExpiration: nil) {
            await originalCache.waitForWrites(toKey: request.key)
            let validators = (try? await originalCache.dataCache?.cachedMetadata(forKey: request.key))??.validators
            return (.image(image), nil, validators ?? .init(), .memory)
        }
        guard access.contains(.diskReads), let dataCache = originalCache.dataCache else { return nil }
        // A write of these bytes still in flight (another size of this source, just downloaded) is waited for, not
        // missed: missing it would download the source again.
        await originalCache.waitForWrites(toKey: request.key)
        guard let entry = try? await dataCache.cachedEntry(
                forKey: request.key, extendingExpiration: request.options.diskCacheAccessExtendingExpiration)
        else { return nil }
        return (.data(entry.data), entry.data, entry.metadata.validators, .disk)
    }

    /// The bytes of the source from the loader: downloaded (unless the URL is on the failed-URL list) or provided;
    /// the response's validators stamped with the exchange's times by the data cache's clock (what ages it).
    private func fetch(
        _ request: RetrievalRequest, progress: @escaping DownloadProgressHandler
    ) async throws -> (data: Data, response: HTTPResponseInfo?, validators: HTTPValidators, metrics: DownloadMetrics?) {
        let clock = request.cache.dataCache?.clock ?? .system
        let requestTime = clock.now()
        let fetched = try await load(request, validators: nil, progress: progress)
        guard case .network = request.source, let response = fetched.response else { return (fetched.data, nil, .init(), nil) }
        let validators = response.validators.stamped(
            requestTime: requestTime, responseTime: clock.now(), requestHeaders: fetched.requestHeaders)
        return (fetched.data, response, validators, fetched.metrics)
    }

    /// One load of the request's source through the loader; a network source is checked against and recorded in the
    /// failed-URL list.
    func load(
        _ request: RetrievalRequest, validators: HTTPValidators?, progress: DownloadProgressHandler?
    ) async throws -> ImageDataResult {
        let options = request.options
        let url: URL? = if case .network(let resource) = request.source { resource.downloadURL } else { nil }
        if let url, !options.retryFailed, let previous = failedURLs.failure(for: url) {
            counters.failedFast.add(1, ordering: .relaxed)
            throw MagpieError.requestFailed(reason: .recentlyFailed(url, previous: previous))
        }
        let loader: any ImageDataLoading = options.downloader ?? self.loader
        do {
            let fetched = try await loader.loadImageData(request.loaderRequest(validators: validators, progress: progress))
            if url != nil { counters.downloads.add(1, ordering: .relaxed) }
            return fetched
        } catch {
            let failure = Self.magpieError(error, source: request.source)
            if let url { failedURLs.record(url, error: failure) }
            throw failure
        }
    }

    /// Runs the processor (the default one decodes) on the manager's processing executor: off the
    /// cooperative pool, and never more at once than it has slots. A decoding failure of an HTTP body names the response.
    private func process(_ request: RetrievalRequest, _ item: ImageProcessItem, response: HTTPResponseInfo?) async throws -> Image {
        do {
            return try await runProcessor(
                request.processor, on: item, decodingOptions: request.options.effectiveDecodingOptions,
                priority: TaskPriority(downloadPriority: request.options.downloadPriority), isProcessed: request.isProcessed)
        } catch is CancellationError {
            throw Self.cancelled(request.source)
        } catch let error as MagpieError {
            if error.isCancellation { throw Self.cancelled(request.source) }
            guard let response, case .decodingFailed(let reason) = error else { throw error }
            throw MagpieError.responseFailed(reason: .undecodable(response, reason: reason))
        }
    }

    /// Stores the variant in memory at once and on disk (awaited with `waitForCache`, else in
    /// the background); with `storeOriginal`, the downloaded bytes too, as the original.
    private func store(
        _ request: RetrievalRequest, image: Image, data: Data?, validators: HTTPValidators, storeOriginal: Bool
    ) async {
        let options = request.options
        // Memory first and synchronously: a request arriving right after this one must hit it. Only here: the
        // data-cache write below does not store into memory again (that could bring back an entry removed since).
        if options.cacheAccess.contains(.memoryWrites) {
            request.cache.memoryCache.storeImage(image, forKey: request.memoryKey, expiration: options.memoryCacheExpiration)
        }
        guard !options.cacheMemoryOnly, options.cacheAccess.contains(.diskWrites) else { return }
        let cache = request.cache
        for other in [cache, request.originalCache] where other !== self.cache {
            otherCaches.withLock { $0[ObjectIdentifier(other)] = other }
        }
        let variantKey = ImageCache.computedKey(request.key, processorIdentifier: request.variantIdentifier)
        let write: @Sendable () async -> Void = {
            _ = await request.cache.storeInDataCache(
                image, original: request.isProcessed ? nil : data, computedKey: variantKey,
                cacheSerializer: request.serializer, expiration: options.diskCacheExpiration, validators: validators)
        }
        // Background writes are counted by the cache they go to (`ImageCache.flush()` / `shutdown()` wait for them),
        // under the keys they write (reads of those keys wait for them).
        await cache.write(keys: [variantKey], awaited: options.waitForCache, write)
        guard storeOriginal, request.isProcessed, let data else { return }
        let original = request.originalCache
        await original.write(keys: [request.key], awaited: options.waitForCache) {
            try? await original.storeToDisk(data, forKey: request.key, expiration: options.diskCacheExpiration, validators: validators)
        }
    }
}
