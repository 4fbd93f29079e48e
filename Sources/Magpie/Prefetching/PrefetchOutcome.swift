/// Called by ``ImagePrefetcher`` after every finished source, with the sources it skipped (already cached),
/// failed and completed so far, each list in the order they finished.
public typealias PrefetcherProgressBlock = @Sendable (_ skipped: [Source], _ failed: [Source], _ completed: [Source]) -> Void

/// Called once by ``ImagePrefetcher`` when the prefetch ends, with its final skipped, failed and completed sources.
public typealias PrefetcherCompletionHandler = @Sendable (_ skipped: [Source], _ failed: [Source], _ completed: [Source]) -> Void

/// What happened to one source of an ``ImagePrefetcher``, as its ``ImagePrefetcher/outcomes`` stream reports it.
public enum PrefetchOutcome: Sendable {
    /// Retrieved and stored (on disk, unless the cache has none).
    case completed(Source, RetrieveImageResult)
    /// Already cached in the given layer: nothing was downloaded.
    case skipped(Source, CacheType)
    /// The retrieval failed, or the prefetcher was stopped before the source finished
    /// (``MagpieError/RequestFailureReason/cancelled(_:)``).
    case failed(Source, MagpieError)

    /// The source this outcome is about.
    public var source: Source {
        switch self {
        case .completed(let source, _), .skipped(let source, _), .failed(let source, _): source
        }
    }
}

/// Where an ``ImagePrefetcher`` stands: its sources by outcome, in the order they finished.
public struct PrefetchSummary: Sendable {
    /// Sources that were already cached.
    public var skipped: [Source]
    /// Sources whose retrieval failed or that were not finished when the prefetcher stopped.
    public var failed: [Source]
    /// Sources retrieved and stored.
    public var completed: [Source]
    /// Time from ``ImagePrefetcher/start()`` to the end (or to now while running); zero if it never started.
    public var elapsed: Duration

    /// A summary with the given lists (public so tests and tools can build one).
    ///
    /// - Parameters:
    ///   - skipped: Sources that were already cached.
    ///   - failed: Sources that failed or were stopped.
    ///   - completed: Sources retrieved and stored.
    ///   - elapsed: Time the prefetch took.
    public init(skipped: [Source] = [], failed: [Source] = [], completed: [Source] = [], elapsed: Duration = .zero) {
        self.skipped = skipped
        self.failed = failed
        self.completed = completed
        self.elapsed = elapsed
    }

    /// How many sources finished in any way: skipped + failed + completed.
    public var finishedCount: Int { skipped.count + failed.count + completed.count }
}
