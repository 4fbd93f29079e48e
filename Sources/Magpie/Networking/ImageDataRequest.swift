import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an ``ImageDataLoading`` loader is asked for: a source, and how to fetch it. ``ImageManager`` builds one per load
/// from the retrieval's options; ``ImageDownloader`` maps it to its own ``ImageDownloadOptions``. A loader ignores
/// what it has no use for (a loader without HTTP has no redirects to hand to ``redirectHandler``).
public struct ImageDataRequest: Sendable {
    /// The network resource or data provider to load.
    public var source: Source
    /// 0...1; higher loads first when loads queue. Default 0.5.
    public var priority: Double
    /// The most one attempt may take; nil (the default) for the loader's own timeout.
    public var timeout: Duration?
    /// Changes an HTTP request before it is sent. Default nil.
    public var requestModifier: (any ImageDownloadRequestModifier)?
    /// Follows, changes or refuses HTTP redirects. Default nil: follow them within the loader's limits.
    public var redirectHandler: (any ImageDownloadRedirectHandler)?
    /// Retries failed attempts; nil (the default) for the loader's own policy.
    public var retryStrategy: (any RetryStrategy)?
    /// A cached copy's validators, which make the load conditional: while they still match, the loader answers with
    /// ``ImageDataResult/notModified`` true and no data. Default nil: an unconditional load.
    public var validators: HTTPValidators?
    /// A folder on the volume of the cache the bytes will go to, where a loader may write a large body as it arrives
    /// (and keep one cut short, to resume it); nil (the default) for the loader's own. The manager passes its
    /// ``DiskStorage``'s ``DiskStorage/spoolDirectory``, so a large body is never copied across volumes.
    public var spoolDirectory: URL?
    /// Called with progress reports while the bytes arrive. Default nil.
    public var progress: DownloadProgressHandler?

    /// A request with the given values; each parameter sets the property of the same name.
    ///
    /// - Parameters:
    ///   - source: What to load.
    ///   - priority: Queue priority, 0...1 (default 0.5).
    ///   - timeout: Per-attempt timeout, or nil for the loader's.
    ///   - requestModifier: Changes the HTTP request before it is sent.
    ///   - redirectHandler: Decides about redirects; nil follows them.
    ///   - retryStrategy: Retries failed attempts; nil for the loader's.
    ///   - validators: A cached copy's validators, for a conditional load.
    ///   - spoolDirectory: Where a large body may be written; nil for the loader's own folder.
    ///   - progress: Receives progress reports.
    public init(
        source: Source,
        priority: Double = 0.5,
        timeout: Duration? = nil,
        requestModifier: (any ImageDownloadRequestModifier)? = nil,
        redirectHandler: (any ImageDownloadRedirectHandler)? = nil,
        retryStrategy: (any RetryStrategy)? = nil,
        validators: HTTPValidators? = nil,
        spoolDirectory: URL? = nil,
        progress: DownloadProgressHandler? = nil
    ) {
        self.source = source
        self.priority = priority
        self.timeout = timeout
        self.requestModifier = requestModifier
        self.redirectHandler = redirectHandler
        self.retryStrategy = retryStrategy
        self.validators = validators
        self.spoolDirectory = spoolDirectory
        self.progress = progress
    }
}

extension ImageDownloadOptions {
    /// The downloader's options for a loader request: its network settings, validators and spool folder (decoding
    /// stays the default: a loader hands back bytes).
    init(_ request: ImageDataRequest) {
        self.init(
            timeout: request.timeout, priority: request.priority, requestModifier: request.requestModifier,
            redirectHandler: request.redirectHandler, retryStrategy: request.retryStrategy, validators: request.validators)
        spoolDirectory = request.spoolDirectory
    }
}
