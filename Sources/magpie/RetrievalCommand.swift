import ArgumentParser
import Magpie

/// `fetch` and `prefetch`: commands that retrieve images into a named cache. They declare the flags whose help or
/// place differs between them; what turns the flags into a cache, a manager and retrieval options is here, once.
protocol RetrievalCommand {
    /// `-v` and `--no-color`.
    var global: GlobalOptions { get }
    /// `--cache-dir`, `--name`, `--size-limit`.
    var namedCache: NamedCacheOptions { get }
    /// `--processor` and `--downsample`.
    var processing: ProcessingChainOptions { get }
    /// `--force-refresh`.
    var forceRefresh: Bool { get }
    /// The cache-policy, `--timeout` and `--retry` flags.
    var policy: RetrievalPolicyOptions { get }
}

extension RetrievalCommand {
    /// A manager over `cache` and the CLI's downloader with `--timeout` and `--retry`: `concurrency` parallel
    /// downloads overall and per host when given, the library's defaults otherwise. Release it with ``shutDown(_:)``.
    func makeManager(cache: ImageCache, concurrency: Int? = nil) -> ImageManager {
        let downloader = global.makeDownloader(
            timeout: policy.timing.timeout, concurrency: concurrency, retry: policy.retrying.strategy)
        return ImageManager(downloader: downloader, cache: cache)
    }

    /// The retrieval options of `--processor`, `--downsample`, `--force-refresh` and the cache-policy flags.
    func retrievalOptions() throws -> [MagpieOption] {
        var options = try processing.magpieOptions()
        if forceRefresh { options.append(.forceRefresh) }
        return options + (try policy.cachePolicy.magpieOptions())
    }

    /// Waits for the manager's background disk writes and stale-while-revalidate revalidations, then closes its
    /// downloader: the command exits right after, which would lose them.
    func shutDown(_ manager: ImageManager) async {
        await manager.shutdown()
        try? await manager.downloader?.shutdown()
    }
}

/// The flags that follow each command's own in `fetch` and `prefetch`: the HTTP caching rules, headers and cache
/// layers, `--timeout` and `--retry`, in that order in both commands' help.
struct RetrievalPolicyOptions: ParsableArguments {
    @OptionGroup var cachePolicy: CachePolicyOptions

    @OptionGroup var timing: TimeoutOption

    @OptionGroup var retrying: RetryOptions
}
