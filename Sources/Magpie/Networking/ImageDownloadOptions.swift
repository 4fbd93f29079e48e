import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Per-request download settings. Callers share one HTTP exchange only when their modified
/// requests, validators and timeouts are equal and neither has a ``redirectHandler``; a shared
/// exchange uses the first caller's ``retryStrategy`` and ``priority``.
public struct ImageDownloadOptions: Sendable {
    /// Overrides the downloader's ``ImageDownloader/Configuration/downloadTimeout`` for this request; nil (the default)
    /// keeps it.
    public var timeout: Duration?
    /// 0...1; higher runs first when downloads are queued. Default 0.5.
    public var priority: Double
    /// Changes the request before it is sent (after the downloader's own modifier). Default nil.
    public var requestModifier: (any ImageDownloadRequestModifier)?
    /// Follows, changes or refuses redirects. Default nil: follow every redirect within the downloader's limits.
    public var redirectHandler: (any ImageDownloadRedirectHandler)?
    /// Retries failed attempts; overrides the downloader's ``ImageDownloader/Configuration/retryStrategy``. Default
    /// nil.
    public var retryStrategy: (any RetryStrategy)?
    /// How ``ImageDownloader/downloadImage(with:options:progress:)`` decodes the body. Default
    /// ``ImageDecodingOptions/default``.
    public var decodingOptions: ImageDecodingOptions
    /// Validators of a cached copy: sent as `If-None-Match` / `If-Modified-Since`. A `304 Not Modified`
    /// answer then gives a result with ``ImageDataResult/notModified`` true and no data. Default nil.
    public var validators: HTTPValidators?
    /// Where a large body is written while it arrives (and kept to resume when cut short); nil (the default) for the
    /// downloader's ``ImageDownloader/Configuration/spoolDirectory``.
    public var spoolDirectory: URL?

    /// Options with the given values; each parameter sets the property of the same name.
    ///
    /// - Parameters:
    ///   - timeout: Per-attempt timeout, or nil for the downloader's.
    ///   - priority: Queue priority, 0...1 (default 0.5).
    ///   - requestModifier: Changes the request before it is sent.
    ///   - redirectHandler: Decides about redirects; nil follows them.
    ///   - retryStrategy: Retries failed attempts; nil uses the downloader's.
    ///   - decodingOptions: How a downloaded image is decoded.
    ///   - validators: A cached copy's validators, for a conditional request.
    public init(
        timeout: Duration? = nil,
        priority: Double = 0.5,
        requestModifier: (any ImageDownloadRequestModifier)? = nil,
        redirectHandler: (any ImageDownloadRedirectHandler)? = nil,
        retryStrategy: (any RetryStrategy)? = nil,
        decodingOptions: ImageDecodingOptions = .default,
        validators: HTTPValidators? = nil
    ) {
        self.timeout = timeout
        self.priority = priority
        self.requestModifier = requestModifier
        self.redirectHandler = redirectHandler
        self.retryStrategy = retryStrategy
        self.decodingOptions = decodingOptions
        self.validators = validators
    }

    /// The defaults: downloader timeout, priority 0.5, no modifier, handler or strategy, default decoding,
    /// no validators.
    public static let `default` = ImageDownloadOptions()
}
