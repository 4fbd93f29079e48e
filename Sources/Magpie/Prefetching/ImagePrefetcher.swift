import MagpieCore
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Warms the caches with a list of images before they are shown.
///
/// Sources already cached are skipped without a download (unless the options contain ``MagpieOption/forceRefresh``);
/// the others go through ``ImageManager/retrieveImage(with:options:progressBlock:)-(Source,_,_)`` with the prefetcher's
/// options plus ``MagpieOption/waitForCache``, so a completed source is in the disk cache. At most
/// ``maxConcurrentDownloads`` retrievals run at once, on a fixed pool of that many tasks, however long the list.
///
/// The progress block, the completion handler and the ``outcomes`` streams are fed one event at a
/// time, in the order the sources finished, never concurrently and never under the prefetcher's
/// lock (a callback may call ``stop()``). A prefetcher runs once: after it ends, by finishing or by
/// ``stop()``, ``start()`` does nothing; make a new prefetcher to prefetch again.
public final class ImagePrefetcher: Sendable {
    /// The sources to prefetch, in the order they are started.
    public let sources: [Source]
    private let options: [MagpieOption]
    private let manager: ImageManager
    let progressBlock: PrefetcherProgressBlock?
    let completionHandler: PrefetcherCompletionHandler?
    let state = Mutex(PrefetcherState())

    /// Prefetches `sources` through `manager`. Nothing starts until ``start()`` or ``run()``.
    ///
    /// - Parameters:
    ///   - sources: The images to prefetch, started in this order; duplicates are fetched (or skipped) twice.
    ///   - options: The options of every retrieval (``MagpieOption/waitForCache`` is added);
    ///     ``MagpieOption/forceRefresh`` downloads cached sources too.
    ///   - manager: The manager that retrieves and caches (default ``ImageManager/shared``).
    ///   - progressBlock: Called after every finished source with the lists so far.
    ///   - completionHandler: Called once, when every source finished or ``stop()`` was called.
    public init(
        sources: [Source], options: [MagpieOption]? = nil, manager: ImageManager = .shared,
        progressBlock: PrefetcherProgressBlock? = nil, completionHandler: PrefetcherCompletionHandler?
    ) {
        self.sources = sources
        self.options = options ?? []
        self.manager = manager
        self.progressBlock = progressBlock
        self.completionHandler = completionHandler
    }

    /// Prefetches `sources`; a trailing closure is the completion handler (`ImagePrefetcher(sources: s) { … }`).
    ///
    /// - Parameters:
    ///   - sources: The images to prefetch, in order.
    ///   - options: The options of every retrieval; nil for none.
    ///   - manager: The manager that retrieves and caches (default ``ImageManager/shared``).
    ///   - completionHandler: Called once, when the prefetch ends.
    public convenience init(
        sources: [Source], options: [MagpieOption]? = nil, manager: ImageManager = .shared,
        completionHandler: PrefetcherCompletionHandler? = nil
    ) {
        self.init(sources: sources, options: options, manager: manager, progressBlock: nil, completionHandler: completionHandler)
    }

    /// Prefetches `resources` (`file:` and `data:` URLs become provider sources).
    ///
    /// - Parameters:
    ///   - resources: The images to prefetch, in order.
    ///   - options: The options of every retrieval; nil for none.
    ///   - manager: The manager that retrieves and caches (default ``ImageManager/shared``).
    ///   - progressBlock: Called after every finished source with the lists so far.
    ///   - completionHandler: Called once, when the prefetch ends.
    public convenience init(
        resources: [any Resource], options: [MagpieOption]? = nil, manager: ImageManager = .shared,
        progressBlock: PrefetcherProgressBlock? = nil, completionHandler: PrefetcherCompletionHandler?
    ) {
        self.init(
            sources: resources.map { $0.convertToSource() }, options: options, manager: manager,
            progressBlock: progressBlock, completionHandler: completionHandler)
    }

    /// Prefetches `resources`; a trailing closure is the completion handler.
    ///
    /// - Parameters:
    ///   - resources: The images to prefetch, in order.
    ///   - options: The options of every retrieval; nil for none.
    ///   - manager: The manager that retrieves and caches (default ``ImageManager/shared``).
    ///   - completionHandler: Called once, when the prefetch ends.
    public convenience init(
        resources: [any Resource], options: [MagpieOption]? = nil, manager: ImageManager = .shared,
        completionHandler: PrefetcherCompletionHandler? = nil
    ) {
        self.init(resources: resources, options: options, manager: manager, progressBlock: nil, completionHandler: completionHandler)
    }

    /// Prefetches `urls`, each cached under its absolute string (`file:` and `data:` URLs are read without HTTP).
    ///
    /// - Parameters:
    ///   - urls: The images to prefetch, in order.
    ///   - options: The options of every retrieval; nil for none.
    ///   - manager: The manager that retrieves and caches (default ``ImageManager/shared``).
    ///   - progressBlock: Called after every finished source with the lists so far.
    ///   - completionHandler: Called once, when the prefetch ends.
    public convenience init(
        urls: [URL], options: [MagpieOption]? = nil, manager: ImageManager = .shared,
        progressBlock: PrefetcherProgressBlock? = nil, completionHandler: PrefetcherCompletionHandler?
    ) {
        self.init(
            sources: urls.map { $0.convertToSource() }, options: options, manager: manager,
            progressBlock: progressBlock, completionHandler: completionHandler)
    }

    /// Prefetches `urls`; a trailing closure is the completion handler (`ImagePrefetcher(urls: urls) { … }`, as in
    /// Kingfisher).
    ///
    /// - Parameters:
    ///   - urls: The images to prefetch, in order.
    ///   - options: The options of every retrieval; nil for none.
    ///   - manager: The manager that retrieves and caches (default ``ImageManager/shared``).
    ///   - completionHandler: Called once, when the prefetch ends.
    public convenience init(
        urls: [URL], options: [MagpieOption]? = nil, manager: ImageManager = .shared,
        completionHandler: PrefetcherCompletionHandler? = nil
    ) {
        self.init(urls: urls, options: options, manager: manager, progressBlock: nil, completionHandler: completionHandler)
    }

    // MARK: Control

    /// How many retrievals run at once; default 5, values below 1 count as 1. Changes after ``start()`` are ignored.
    public var maxConcurrentDownloads: Int {
        get { state.withLock { $0.maxConcurrentDownloads } }
        set { state.withLock { if $0.phase == .idle { $0.maxConcurrentDownloads = max(1, newValue) } } }
    }

    /// Starts prefetching. Does nothing if the prefetcher already started or ended (a stopped
    /// prefetcher cannot be restarted). An empty list completes at once.
    public func start() {
        state.withLock { state in
            guard state.phase == .idle else { return }
            state.phase = .running
            state.startedAt = .now
            guard !sources.isEmpty else { return state.finish() }
            let workerCount = min(state.maxConcurrentDownloads, sources.count)
            state.workers = (0..<workerCount).map { _ in Task { await self.work() } }
        }
        deliverEvents()
    }

    /// Stops prefetching: cancels the running retrievals, fails every source that has not
    /// finished (``MagpieError/RequestFailureReason/cancelled(_:)``, no progress call for them) and calls the
    /// completion handler. Before ``start()``, every source fails. Does nothing once ended.
    ///
    /// A retrieval that was already writing its image to the disk cache finishes that write, so
    /// such a source (at most one per worker) is reported failed and is cached all the same.
    ///
    /// The completion handler has run when this returns, unless another thread is delivering
    /// an earlier callback at that moment; it then runs right after, on that thread.
    public func stop() {
        let workers = state.withLock { state -> [Task<Void, Never>] in
            guard state.phase != .finished else { return [] }
            let unfinished = state.inFlight.sorted() + Array(state.next..<sources.count)
            let notify = !state.subscribers.isEmpty
            for index in unfinished {
                let source = sources[index]
                state.failed.append(source)
                if notify { state.events.append(.outcome(.failed(source, ImageManager.cancelled(source)))) }
            }
            state.inFlight = []
            state.next = sources.count
            let workers = state.workers
            state.finish()
            return workers
        }
        for worker in workers { worker.cancel() }
        deliverEvents()
    }

    /// Starts (unless started) and returns when the prefetch has ended and the completion handler
    /// has run. Cancelling the calling task stops the prefetcher.
    ///
    /// - Returns: The final lists of skipped, failed and completed sources, and the elapsed time.
    public func run() async -> PrefetchSummary {
        start()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ended = state.withLock { state -> PrefetchSummary? in
                    guard state.completionDelivered else {
                        state.waiters.append(continuation)
                        return nil
                    }
                    return state.summary
                }
                if let ended { continuation.resume(returning: ended) }
            }
        } onCancel: {
            stop()
        }
    }

    // MARK: Observing

    /// The lists so far and the time since ``start()``.
    public var summary: PrefetchSummary { state.withLock { $0.summary } }

    /// True once every source finished or ``stop()`` was called.
    public var isFinished: Bool { state.withLock { $0.phase == .finished } }

    /// A new stream of the outcomes of the sources that finish from now on (subscribe before
    /// ``start()`` to see all), finishing when the prefetch ends; already finished if it has ended.
    /// Outcomes wait in the stream until read (completed ones hold their image), so read it or drop it.
    public var outcomes: AsyncStream<PrefetchOutcome> {
        let (stream, continuation) = AsyncStream.makeStream(of: PrefetchOutcome.self)
        let id = state.withLock { state -> Int? in
            guard !state.completionDelivered else { return nil }
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        // A consumer that stops listening must not keep receiving (and buffering) outcomes.
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: Working

    /// One worker of the pool: takes the next source until none is left or the prefetcher stopped.
    private func work() async {
        let forceRefresh = manager.parse(options).forceRefresh
        let retrievalOptions = options + [.waitForCache]
        while let index = claim() {
            let source = sources[index]
            let outcome: PrefetchOutcome
            let cached = if forceRefresh { CacheType.none } else { await manager.cachedType(for: source, options: options) }
            if cached.cached {
                outcome = .skipped(source, cached)
            } else {
                do {
                    outcome = .completed(source, try await manager.retrieveImage(with: source, options: retrievalOptions))
                } catch {
                    outcome = .failed(source, ImageManager.magpieError(error, source: source))
                }
            }
            record(outcome, index: index)
            deliverEvents()
        }
    }

    /// The index of the next source to prefetch, nil when none is left or the prefetcher ended.
    private func claim() -> Int? {
        state.withLock { state in
            guard state.phase == .running, state.next < sources.count else { return nil }
            defer { state.next += 1 }
            state.inFlight.insert(state.next)
            return state.next
        }
    }

    /// Files the outcome of source `index`, unless `stop()` already failed it.
    private func record(_ outcome: PrefetchOutcome, index: Int) {
        let reportsProgress = progressBlock != nil
        state.withLock { state in
            guard state.phase == .running, state.inFlight.remove(index) != nil else { return }
            switch outcome {
            case .completed(let source, _): state.completed.append(source)
            case .skipped(let source, _): state.skipped.append(source)
            case .failed(let source, _): state.failed.append(source)
            }
            if !state.subscribers.isEmpty { state.events.append(.outcome(outcome)) }
            if reportsProgress {
                state.events.append(.progress(skipped: state.skipped.count, failed: state.failed.count, completed: state.completed.count))
            }
            if state.finishedCount == sources.count { state.finish() }
        }
    }
}
