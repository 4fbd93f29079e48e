/// The mutable state of an `ImagePrefetcher`, behind its mutex.
struct PrefetcherState {
    enum Phase { case idle, running, finished }

    /// Something to tell the callbacks and streams, queued in order under the lock and delivered outside it.
    enum Event {
        case outcome(PrefetchOutcome)
        /// The list sizes right after a source finished: the progress block gets those prefixes.
        case progress(skipped: Int, failed: Int, completed: Int)
        case finished
    }

    var maxConcurrentDownloads = 5
    var phase = Phase.idle
    /// The next source index a worker takes.
    var next = 0
    /// Indexes taken by a worker and not yet recorded.
    var inFlight: Set<Int> = []
    var skipped: [Source] = []
    var failed: [Source] = []
    var completed: [Source] = []
    var startedAt: ContinuousClock.Instant?
    /// Set when the prefetch ends.
    var elapsed: Duration?
    var workers: [Task<Void, Never>] = []

    var events: [Event] = []
    /// True while some thread drains `events`; others only queue.
    var delivering = false
    var subscribers: [Int: AsyncStream<PrefetchOutcome>.Continuation] = [:]
    var nextSubscriber = 0
    /// True once the completion handler ran and the streams finished.
    var completionDelivered = false
    var waiters: [CheckedContinuation<PrefetchSummary, Never>] = []

    var finishedCount: Int { skipped.count + failed.count + completed.count }

    var summary: PrefetchSummary {
        let elapsed = elapsed ?? startedAt.map { ContinuousClock.now - $0 } ?? .zero
        return PrefetchSummary(skipped: skipped, failed: failed, completed: completed, elapsed: elapsed)
    }

    /// Ends the prefetch: nothing is recorded after this.
    mutating func finish() {
        phase = .finished
        elapsed = startedAt.map { ContinuousClock.now - $0 } ?? .zero
        workers = []
        events.append(.finished)
    }
}

extension ImagePrefetcher {
    /// What one pass of the delivery loop hands out: the queued events, the streams to feed and,
    /// for progress events, the lists (taken once per pass, not once per event).
    private struct Batch {
        var events: [PrefetcherState.Event]
        var subscribers: [AsyncStream<PrefetchOutcome>.Continuation]
        var lists: (skipped: [Source], failed: [Source], completed: [Source])
    }

    /// Delivers the queued events unless another thread is already doing it (that thread then
    /// delivers these too). One deliverer at a time keeps callbacks ordered and never concurrent.
    func deliverEvents() {
        let deliverer = state.withLock { state -> Bool in
            guard !state.delivering, !state.events.isEmpty else { return false }
            state.delivering = true
            return true
        }
        guard deliverer else { return }
        while let batch = nextBatch() {
            for event in batch.events {
                switch event {
                case .outcome(let outcome):
                    for subscriber in batch.subscribers { subscriber.yield(outcome) }
                case .progress(let skipped, let failed, let completed):
                    progressBlock?(
                        Array(batch.lists.skipped.prefix(skipped)), Array(batch.lists.failed.prefix(failed)),
                        Array(batch.lists.completed.prefix(completed)))
                case .finished:
                    deliverEnd()
                }
            }
        }
    }

    /// The queued events, or nil (and no longer delivering) when there are none.
    private func nextBatch() -> Batch? {
        let needsLists = progressBlock != nil
        return state.withLock { state -> Batch? in
            guard !state.events.isEmpty else {
                state.delivering = false
                return nil
            }
            defer { state.events = [] }
            let lists = needsLists ? (state.skipped, state.failed, state.completed) : ([], [], [])
            return Batch(events: state.events, subscribers: Array(state.subscribers.values), lists: lists)
        }
    }

    /// Calls the completion handler, then finishes the streams and resumes `run()` callers.
    private func deliverEnd() {
        let ended = state.withLock { $0.summary }
        completionHandler?(ended.skipped, ended.failed, ended.completed)
        let (subscribers, waiters) = state.withLock { state in
            state.completionDelivered = true
            defer {
                state.subscribers = [:]
                state.waiters = []
            }
            return (Array(state.subscribers.values), state.waiters)
        }
        for subscriber in subscribers { subscriber.finish() }
        for waiter in waiters { waiter.resume(returning: ended) }
    }
}
