import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whether a cached entry may be served as it is, must be revalidated first, may be served stale, or must be
/// replaced: `.revalidate` (ask whenever there are validators) and `.respectCacheControl` (RFC 9111 as a private
/// cache, through ``HTTPCachePolicy``).
extension ImageManager {
    /// What a freshness check decided.
    enum Freshness {
        /// Serve from the caches, marked so (fresh, or stale as `stale-while-revalidate`/`stale-if-error` allow), with the
        /// stored entry's validators when there is one.
        case fresh(RetrieveImageResult.Served, HTTPValidators?)
        /// Unusable and nothing to revalidate with (or `Vary` does not match): download.
        case stale
        /// The data cache holds no entry for the variant or its original: the disk has nothing to read.
        case absent
        /// `304`: the entries were refreshed (to these merged validators); serve from the caches.
        case notModified(DownloadMetrics, HTTPValidators)
        /// `200`: new bytes, already processed and stored.
        case replaced(RetrieveImageResult)
    }

    /// A data-cache entry whose HTTP metadata describes the upstream version.
    typealias StoredEntry = (cache: any DataCaching, key: String, metadata: DataCacheMetadata)

    /// The stored variant's entry, then the original's: the entries a revalidation refreshes.
    func storedEntries(_ request: RetrievalRequest) async -> [StoredEntry] {
        var candidates: [(owner: ImageCache, cache: any DataCaching, key: String)] = []
        if let dataCache = request.cache.dataCache {
            candidates.append((request.cache, dataCache, ImageCache.computedKey(request.key, processorIdentifier: request.variantIdentifier)))
        }
        if request.isProcessed, let dataCache = request.originalCache.dataCache {
            candidates.append((request.originalCache, dataCache, request.key))
        }
        var stored: [StoredEntry] = []
        for candidate in candidates {
            // A write of the entry still in flight is waited for: its metadata is what this retrieval must see.
            await candidate.owner.waitForWrites(toKey: candidate.key)
            if let metadata = try? await candidate.cache.cachedMetadata(forKey: candidate.key) {
                stored.append((candidate.cache, candidate.key, metadata))
            }
        }
        return stored
    }

    /// What the freshness check of one retrieval has already read, so that nothing is read twice: the stored entries
    /// (nil when the request moved to a `Vary` alternative, whose entries are other keys) and the request headers.
    struct FreshnessLookup {
        var request: RetrievalRequest
        var stored: [StoredEntry]?
        var requestHeaders: [HTTPHeaderField]?
    }

    /// The request under the key of the `Vary` alternative its headers select, when the stored response varies and
    /// this request's headers differ from the stored request's: each combination of the named headers is its own
    /// entry, so two clients asking with different `Accept` headers do not evict each other.
    func varyAlternative(_ request: RetrievalRequest) async throws -> FreshnessLookup {
        guard request.options.cacheAccess.contains(.diskReads) else { return FreshnessLookup(request: request) }
        let stored = await storedEntries(request)
        guard let first = stored.first else { return FreshnessLookup(request: request, stored: stored) }
        let policy = HTTPCachePolicy(validators: first.metadata.validators, storedAt: first.metadata.created)
        let names = policy.varyingHeaderNames
        // `Vary: *` matches no request: there is no alternative to look for.
        guard !names.isEmpty, !names.contains("*") else { return FreshnessLookup(request: request, stored: stored) }
        let headers = try await requestHeaders(request)
        if policy.matchesVary(requestHeaders: headers) {
            return FreshnessLookup(request: request, stored: stored, requestHeaders: headers)
        }
        let alternative = request.varying(HTTPCachePolicy.varyingHeaders(named: first.metadata.validators.vary, in: headers))
        return FreshnessLookup(request: alternative, requestHeaders: headers)
    }

    /// The headers the loader would send for this request.
    private func requestHeaders(_ request: RetrievalRequest) async throws -> [HTTPHeaderField] {
        let loader: any ImageDataLoading = request.options.downloader ?? self.loader
        return try await loader.requestHeaders(for: request.loaderRequest())
    }

    /// Decides how the cached entry of `request` may be used, revalidating or replacing it when needed.
    func freshness(_ lookup: FreshnessLookup, url: URL, progress: DownloadProgressHandler?) async throws -> Freshness {
        let request = lookup.request
        let options = request.options
        guard options.cacheAccess.contains(.diskReads) else { return .fresh(.fresh, nil) }
        let stored: [StoredEntry]
        if let known = lookup.stored { stored = known } else { stored = await storedEntries(request) }
        guard let first = stored.first else { return .absent }
        let validators = first.metadata.validators
        guard options.respectCacheControl else {
            // `.revalidate` alone: ask whenever there is something to ask with; a transient failure serves the copy.
            guard validators.canRevalidate else { return .fresh(.fresh, validators) }
            if !options.retryFailed, failedURLs.contains(url) { return .fresh(.fresh, validators) }
            do {
                return try await revalidate(request, stored: stored, conditional: true, progress: progress)
            } catch let error as MagpieError where error.isTransient {
                logger.info("revalidation failed, serving the cached copy", metadata: ["url": "\(url)", "error": "\(error)"])
                return .fresh(.fresh, validators)
            }
        }
        // A variant made later from the original is as old as the original's response.
        let policy = HTTPCachePolicy(validators: validators, storedAt: stored.map(\.metadata.created).min() ?? first.metadata.created)
        if !policy.varyingHeaderNames.isEmpty {
            let headers: [HTTPHeaderField]
            if let known = lookup.requestHeaders { headers = known } else { headers = try await requestHeaders(request) }
            if !policy.matchesVary(requestHeaders: headers) { return .stale }
        }
        let now = first.cache.clock.now()
        let isFresh = policy.isFresh(at: now)
        if isFresh, policy.isImmutable || !options.revalidate { return .fresh(.fresh, validators) }
        if !isFresh, !options.revalidate, policy.allowsStaleWhileRevalidating(at: now) {
            revalidateInBackground(request, stored: stored)
            counters.servedStale.add(1, ordering: .relaxed)
            return .fresh(.stale(.whileRevalidating), validators)
        }
        // Without validators a stale entry is replaced by the miss path, unless stale-if-error may still need it.
        guard validators.canRevalidate || policy.allowsStaleOnError(at: now) else { return .stale }
        do {
            return try await revalidate(request, stored: stored, conditional: validators.canRevalidate, progress: progress)
        } catch let error as MagpieError where Self.allowsStaleServing(after: error) {
            // Asked to revalidate an entry that is still fresh: it may be served as it is.
            if isFresh { return .fresh(.fresh, validators) }
            guard policy.allowsStaleOnError(at: now) else { throw error }
            logger.info("revalidation failed, serving stale within stale-if-error", metadata: ["url": "\(url)", "error": "\(error)"])
            counters.servedStale.add(1, ordering: .relaxed)
            return .fresh(.stale(.revalidationFailed), validators)
        }
    }

    /// The failures `stale-if-error` covers: no connection, a timeout, a cut body, a 5xx (also when the failed-URL
    /// list answers with one it recorded, `Retry-After` pending).
    static func allowsStaleServing(after error: MagpieError) -> Bool {
        switch error {
        case .requestFailed(reason: .timedOut), .requestFailed(reason: .connectionFailed), .responseFailed(reason: .truncated):
            return true
        case .responseFailed(reason: .badStatus(let response)):
            return response.statusCode >= 500
        case .requestFailed(reason: .recentlyFailed(_, let previous)):
            return allowsStaleServing(after: previous)
        default:
            return false
        }
    }

    /// One request to the origin for stored entries: conditional when `conditional`. A 304 refreshes every stored
    /// entry with the merged headers (new `Cache-Control`, `Expires`, `ETag`, `Date`…); a 200 replaces them.
    func revalidate(
        _ request: RetrievalRequest, stored: [StoredEntry], conditional: Bool, progress: DownloadProgressHandler?
    ) async throws -> Freshness {
        let clock = stored.first?.cache.clock ?? request.cache.dataCache?.clock ?? .system
        let requestTime = clock.now()
        let fetched = try await load(request, validators: conditional ? stored.first?.metadata.validators : nil, progress: progress)
        let fresh = fetched.response.map {
            $0.validators.stamped(requestTime: requestTime, responseTime: clock.now(), requestHeaders: fetched.requestHeaders)
        } ?? HTTPValidators()
        guard fetched.notModified else {
            if request.options.respectCacheControl, !HTTPCachePolicy(validators: fresh, storedAt: requestTime).isStorable {
                // The stale copies are superseded by a response that may not be kept: none of them may be served again.
                try? await request.cache.removeImage(forKey: request.key, processorIdentifier: request.variantIdentifier)
                if request.isProcessed { try? await request.originalCache.removeImage(forKey: request.key) }
            }
            return .replaced(try await finishDownload(
                request, data: fetched.data, response: fetched.response, validators: fresh, metrics: fetched.metrics))
        }
        counters.notModified.add(1, ordering: .relaxed)
        let merged = (stored.first?.metadata.validators ?? HTTPValidators()).merged(with: fresh)
        guard request.options.cacheAccess.contains(.diskWrites) else { return .notModified(fetched.metrics, merged) }
        for (dataCache, key, metadata) in stored {
            _ = try? await dataCache.refreshEntry(
                forKey: key, validators: metadata.validators.merged(with: fresh), expiration: request.options.diskCacheExpiration)
        }
        return .notModified(fetched.metrics, merged)
    }

    /// `stale-while-revalidate`: one revalidation per entry in the background, whoever asks meanwhile; its writes
    /// finish before it counts as done, so the next caller sees the refreshed entry. ``shutdown()`` waits for it.
    private func revalidateInBackground(_ request: RetrievalRequest, stored: [StoredEntry]) {
        let token = "\(ObjectIdentifier(request.cache).hashValue)|" + request.memoryKey
        guard revalidationsInFlight.withLock({ $0.insert(token).inserted }) else { return }
        counters.backgroundRevalidations.add(1, ordering: .relaxed)
        var waiting = request
        waiting.options.waitForCache = true
        let request = waiting
        let conditional = stored.first?.metadata.validators.canRevalidate ?? false
        backgroundWork.start(priority: .utility) {
            do {
                _ = try await self.revalidate(request, stored: stored, conditional: conditional, progress: nil)
            } catch {
                self.logger.info("background revalidation failed", metadata: ["key": "\(request.key)", "error": "\(error)"])
            }
            self.revalidationsInFlight.withLock { _ = $0.remove(token) }
        }
    }
}
