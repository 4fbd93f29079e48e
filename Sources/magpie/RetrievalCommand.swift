import ArgumentParser
import Magpie

/// `fetch` and `prefetch`: commands that retrieve images into a named cache. They declare the flags whose help or
/// place differs between them; what turns the flags into a cache, a manager and retrieval options is here, once.
protocol RetrievalCommand {
    /// `-v` and `--no-color`.
    var global: GlobalOptions { get }
    /// `--cache-dir`, `--name`, `--size-limit`.
    var namedCache: NamedCacheOptions { get }
    /// `--processor`: a processor chain's text form.
    var processor: String? { get }
    /// `--downsample`: `WxH`.
    var downsample: String? { get }
    /// `--force-refresh`.
    var forceRefresh: Bool { get }
    /// The cache-policy, `--timeout` and `--retry` flags.
    var policy: RetrievalPolicyOptions { get }
}

extension RetrievalCommand {
    /// Checks `--processor` and `--downsample` (usage errors); call it from `validate()`.
    func validateProcessing() throws {
        if let downsample, PixelSize(parsing: downsample) == nil { throw ValidationError("--downsample must look like 256x256") }
        _ = try processorOption(processor)
    }

    /// A manager over `cache` and the CLI's downloader with `--timeout` and `--retry`: `concurrency` parallel
    /// downloads overall and per host when given, the library's defaults otherwise. Release it with ``shutDown(_:)``.
    func makeManager(cache: ImageCache, concurrency: Int? = nil) -> ImageManager {
        let downloader = global.makeDownloader(
            timeout: policy.timing.timeout, concurrency: concurrency, retry: policy.retrying.strategy)
        return ImageManager(downloader: downloader, cache: cache)
    }

    /// The retrieval options of `--processor`, `--downsample`, `--force-refresh` and the cache-policy flags.
    func retrievalOptions() throws -> [MagpieOption] {
        var options: [MagpieOption] = []
        if let processor = try processorOption(processor) { options.append(.processor(processor)) }
        if let size = downsample.flatMap(PixelSize.init(parsing:)) { options.append(.downsampling(size)) }
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
