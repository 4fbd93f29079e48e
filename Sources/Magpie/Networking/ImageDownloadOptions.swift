#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Per-request download settings. Callers share one HTTP exchange only when their modified
/// requests, validators and timeouts are equal and neither has a `redirectHandler`; a shared
/// exchange uses the first caller's `retryStrategy` and `priority`.
public struct ImageDownloadOptions: Sendable {
    /// Overrides the downloader's `downloadTimeout` for this request.
    public var timeout: Duration?
    /// 0...1; higher runs first when downloads are queued. Default 0.5.
    public var priority: Double
    /// Changes the request before it is sent (after the downloader's own modifier).
    public var requestModifier: (any ImageDownloadRequestModifier)?
    /// Follows, changes or refuses redirects. Default: follow.
    public var redirectHandler: (any ImageDownloadRedirectHandler)?
    /// Retries failed attempts; overrides the downloader's strategy.
    public var retryStrategy: (any RetryStrategy)?
    /// How `downloadImage` decodes the body.
    public var decodingOptions: ImageDecodingOptions
    /// Validators of a cached copy: sent as `If-None-Match` / `If-Modified-Since`. A `304 Not Modified`
    /// answer then gives a result with `notModified == true` and no data.
    public var validators: DiskStorage.Validators?

    /// Options with the given values.
    public init(
        timeout: Duration? = nil,
        priority: Double = 0.5,
        requestModifier: (any ImageDownloadRequestModifier)? = nil,
        redirectHandler: (any ImageDownloadRedirectHandler)? = nil,
        retryStrategy: (any RetryStrategy)? = nil,
        decodingOptions: ImageDecodingOptions = .default,
        validators: DiskStorage.Validators? = nil
    ) {
        self.timeout = timeout
        self.priority = priority
        self.requestModifier = requestModifier
        self.redirectHandler = redirectHandler
        self.retryStrategy = retryStrategy
        self.decodingOptions = decodingOptions
        self.validators = validators
    }

    /// The defaults.
    public static let `default` = ImageDownloadOptions()
}

/// Bytes received so far by one download.
public struct DownloadProgress: Sendable, Equatable {
    /// Body bytes received.
    public var receivedBytes: Int
    /// The body's `Content-Length`, when the server sent one.
    public var expectedBytes: Int?

    /// A progress value.
    public init(receivedBytes: Int, expectedBytes: Int?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }

    /// received / expected in 0...1, when the size is known.
    public var fraction: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(receivedBytes) / Double(expectedBytes))
    }
}

/// Called with progress reports of one caller's download (throttled, at most every `progressInterval`).
public typealias DownloadProgressHandler = @Sendable (DownloadProgress) -> Void
