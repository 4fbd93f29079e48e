import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import AsyncHTTPClient
import Tracing
import Logging
import NIOCore
import Synchronization

/// Downloads images over HTTP(S) with AsyncHTTPClient, and reads `file:` and `data:` URLs.
///
/// Concurrent requests for the same (modified) request share one HTTP exchange; each caller
/// gets its own progress and result, and cancelling one caller leaves the others running.
/// Downloads wait for a slot (overall and per host, highest priority first), each attempt has a
/// deadline covering the whole body, bodies are streamed within a size limit, redirects are
/// capped and loop-checked, and failed attempts can be retried by a ``RetryStrategy``.
public final class ImageDownloader: Sendable {
    /// A shared downloader named `default` with the default ``Configuration``. Never shut it down.
    public static let `default` = ImageDownloader(name: "default")

    /// The name, used in log and metric labels.
    public let name: String
    /// The settings given at creation; they cannot change afterwards.
    public let configuration: Configuration

    private let clientOwner: HTTPClientOwner
    /// Checks every hop and pins connections when ``Configuration/networkAccessPolicy`` is set.
    let networkGuard: NetworkGuard?
    let scheduler: DownloadScheduler
    /// The bytes stage: one HTTP exchange per (modified) request, however many callers wait.
    private let exchanges: SharedWork<String, ImageDataResult>
    /// The decoded stage over it: one decode per exchange and decoding variant.
    private let decodes = SharedWork<String, ImageLoadingResult>()
    private let nextSubscriberID = Atomic<UInt64>(0)
    private let delegateBox = Mutex<(any ImageDownloaderDelegate)?>(nil)
    private let counters: DownloadCounters
    /// One timer for every attempt's timeout.
    private let deadlines = DeadlineWatch()

    /// A downloader with its own HTTP client (connection pool).
    ///
    /// Logs a warning when `configuration.trustedHosts` is not empty.
    /// - Parameters:
    ///   - name: Used in log metadata and metric labels; give each downloader its own.
    ///   - configuration: Limits, timeouts, TLS and defaults for every download (default ``Configuration/init()``).
    public init(name: String, configuration: Configuration = Configuration()) {
        self.name = name
        self.configuration = configuration
        self.exchanges = SharedWork(progressInterval: configuration.progressInterval)
        self.scheduler = DownloadScheduler(
            maximumTotal: configuration.maximumConcurrentDownloads,
            maximumPerHost: configuration.maximumConcurrentDownloadsPerHost)
        self.clientOwner = HTTPClientOwner(
            client: HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: Self.clientConfiguration(configuration)))
        self.networkGuard = configuration.networkAccessPolicy.map { policy in
            NetworkGuard(policy: policy) { host, address in
                var pinned = Self.clientConfiguration(configuration)
                pinned.dnsOverride = [host: address]
                // A pinned client has one address: left to itself, AsyncHTTPClient would retry a refused connection to it
                // until the connect timeout, while the transfer moves on to the host's next checked address at once
                // (`HTTPTransfer.send`). A failed download is still retried by the downloader's retry strategy.
                pinned.connectionPool.retryConnectionEstablishment = false
                return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: pinned)
            }
        }
        self.counters = DownloadCounters(downloader: name)
        if !configuration.trustedHosts.isEmpty {
            configuration.logger.warning("TLS certificates are NOT verified for these hosts", metadata: [
                "downloader": "\(name)", "trustedHosts": "\(configuration.trustedHosts.sorted())",
            ])
        }
    }

    /// Receives request/response/finish events. Set it before downloading; nil (the default) for none.
    public var delegate: (any ImageDownloaderDelegate)? {
        get { delegateBox.withLock { $0 } }
        set { delegateBox.withLock { $0 = newValue } }
    }

    /// Counts since creation: HTTP requests sent, callers served by another caller's exchange, body bytes.
    public var statistics: DownloadStatistics { counters.snapshot }

    /// Downloads waiting for a slot right now (not counting running ones).
    public var queuedDownloadCount: Int { scheduler.queuedCount }

    /// Closes the connection pools (the pinned ones of a ``Configuration/networkAccessPolicy`` too). Later downloads
    /// fail. ``default`` should never be shut down.
    ///
    /// - Throws: AsyncHTTPClient's error when the client was already shut down.
    public func shutdown() async throws {
        await networkGuard?.shutdown()
        try await clientOwner.client.shutdown()
    }

    // MARK: Downloading

    /// Downloads the bytes at `url` without decoding them (for callers that cache bytes).
    /// With `options.validators` a `304 Not Modified` gives a result with ``ImageDataResult/notModified`` and no data.
    ///
    /// `file:` and `data:` URLs are read directly, without the queue or a request (refused with a
    /// ``Configuration/networkAccessPolicy``).
    /// - Parameters:
    ///   - url: An `http`, `https`, `file` or `data` URL.
    ///   - options: Timeout, priority, modifier, redirect handler, retry strategy and validators.
    ///   - progress: Called with throttled progress reports of this caller's download.
    /// - Returns: The body, the final response and the download's metrics.
    /// - Throws: ``MagpieError/requestFailed(reason:)`` (invalid URL or scheme, cancelled, timed out, connection
    ///   or TLS failure, redirect trouble, a data provider failure, refused by the network access policy) or ``MagpieError/responseFailed(reason:)``
    ///   (bad status, not an image, too large, truncated, empty body).
    public func downloadData(
        with url: URL, options: ImageDownloadOptions = .default, progress: DownloadProgressHandler? = nil
    ) async throws -> ImageDataResult {
        if Task.isCancelled { throw MagpieError.requestFailed(reason: .cancelled(url)) }
        let request = try await prepare(url: url, options: options)
        if let provided = try await provided(request) { return provided }
        return try await exchange(request, key: exchangeKey(request, options: options), options: options, progress: progress)
    }

    /// Downloads and decodes the image at `url`. Callers that share one exchange and ask for the
    /// same decoding options share one decode too. Conditional requests are not made here
    /// (`options.validators` is ignored): a 304 carries no image.
    ///
    /// - Parameters:
    ///   - url: An `http`, `https`, `file` or `data` URL.
    ///   - options: Download settings and ``ImageDownloadOptions/decodingOptions``.
    ///   - progress: Called with throttled progress reports of this caller's download.
    /// - Returns: The image with the bytes, response and metrics it came from. Nothing is cached.
    /// - Throws: The errors of ``downloadData(with:options:progress:)``; a body that does not decode
    ///   fails with ``MagpieError/ResponseFailureReason/undecodable(_:reason:)`` (or, for `file:` and `data:` URLs,
    ///   ``MagpieError/decodingFailed(reason:)``).
    public func downloadImage(
        with url: URL, options: ImageDownloadOptions = .default, progress: DownloadProgressHandler? = nil
    ) async throws -> ImageLoadingResult {
        var unconditional = options
        unconditional.validators = nil
        let options = unconditional
        if Task.isCancelled { throw MagpieError.requestFailed(reason: .cancelled(url)) }
        let request = try await prepare(url: url, options: options)
        let decodingOptions = options.decodingOptions
        if let provided = try await provided(request) { return try provided.loadingResult(decodingOptions: decodingOptions) }
        let key = exchangeKey(request, options: options)
        // Callers of one exchange that want the same decode share it; other decodes share only the bytes.
        return try await decodes.value(
            for: key + "\ndecode:" + decodingOptions.variantIdentifier, priority: TaskPriority(downloadPriority: options.priority),
            cancellationError: MagpieError.requestFailed(reason: .cancelled(request.url)), progress: progress,
            // A caller that joins a running decode is served by another caller's exchange too.
            onJoin: { self.counters.dedupeHit() }
        ) { reporter in
            let result = try await self.exchange(request, key: key, options: options, progress: { reporter.report($0) })
            // Decoding is CPU work: on the bounded processing executor, off the cooperative pool.
            return try await BoundedExecutor.processing.run { _ in try result.loadingResult(decodingOptions: decodingOptions) }
        }
    }

    /// Completion-handler variant of ``downloadImage(with:options:progress:)`` in Kingfisher's shape. The handler is called
    /// exactly once (with ``MagpieError/RequestFailureReason/cancelled(_:)`` after ``DownloadTask/cancel()``),
    /// on a task of the global executor.
    ///
    /// - Parameters:
    ///   - url: An `http`, `https`, `file` or `data` URL.
    ///   - options: Download and decoding settings.
    ///   - progressBlock: Called with bytes received and expected (-1 when unknown), throttled; two parameters, as in
    ///     Kingfisher, so a trailing closure is always the completion handler.
    ///   - completionHandler: Receives the image or the error.
    /// - Returns: A task to cancel the download with.
    @discardableResult
    public func downloadImage(
        with url: URL, options: ImageDownloadOptions = .default, progressBlock: DownloadProgressBlock? = nil,
        completionHandler: @escaping @Sendable (Result<ImageLoadingResult, MagpieError>) -> Void
    ) -> DownloadTask {
        let progress = DownloadProgress.handler(reportingTo: progressBlock)
        return DownloadTask(url: url) {
            do {
                completionHandler(.success(try await self.downloadImage(with: url, options: options, progress: progress)))
            } catch {
                completionHandler(.failure(TransportError.map(error, url: url, timeout: options.timeout ?? self.configuration.downloadTimeout)))
            }
        }
    }

    /// The headers a download of `url` with `options` sends (modifiers applied, defaults added).
    func sentHeaders(url: URL, options: ImageDownloadOptions) async throws -> [HTTPHeaderField] {
        HTTPTransfer.sentHeaders(try await prepare(url: url, options: options), userAgent: configuration.userAgent)
    }

    // MARK: Internals

    /// The AsyncHTTPClient settings of the downloader's client (and of its pinned ones, which add `dnsOverride`).
    static func clientConfiguration(_ configuration: Configuration) -> HTTPClient.Configuration {
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: configuration.tlsConfiguration,
            redirectConfiguration: .disallow,  // followed here, to apply the handler, the cap and loop checks
            timeout: .init(connect: TimeAmount(saturating: configuration.connectTimeout)),
            decompression: .disabled)
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(
            8, configuration.maximumConcurrentDownloadsPerHost)
        clientConfiguration.httpVersion = .automatic
        // AsyncHTTPClient opens a span and computes its attributes for every request, even for the no-op tracer it
        // captures when no tracer was bootstrapped (about 4 % of a 1,000-download run's client samples): with that
        // one, no tracer at all. A bootstrapped tracer is kept, and as in AsyncHTTPClient it is the one at creation.
        if clientConfiguration.tracing.tracer is NoOpTracer {
            clientConfiguration.tracing.tracer = nil
        }
        return clientConfiguration
    }

    /// The bytes of a `file:` or `data:` URL, read without the queue or a request; nil for HTTP(S).
    private func provided(_ request: ImageRequest) async throws -> ImageDataResult? {
        guard let provider = dataProvider(for: request.url) else { return nil }
        let data = try await provider.data()
        return ImageDataResult(data: data, url: request.url, response: nil, notModified: false, metrics: DownloadMetrics())
    }

    /// What makes two downloads one exchange: the modified request (method, URL, sorted headers), the
    /// conditional validators and the deadline. A request with its own redirect handler shares with
    /// nobody (a refusing handler must not receive another caller's redirect).
    private func exchangeKey(_ request: ImageRequest, options: ImageDownloadOptions) -> String {
        var key = request.dedupeKey
        if let validators = options.validators {
            key += "\nif-none-match:\(validators.etag ?? "")\nif-modified-since:\(validators.lastModified ?? "")"
        }
        key += "\ntimeout:\(options.timeout ?? configuration.downloadTimeout)"
        if options.redirectHandler != nil {
            key += "\nredirect-handler:\(nextSubscriberID.wrappingAdd(1, ordering: .relaxed).newValue)"
        }
        return key
    }

    /// The bytes stage: joins the exchange running for `key`, or starts it.
    private func exchange(
        _ request: ImageRequest, key: String, options: ImageDownloadOptions, progress: DownloadProgressHandler?
    ) async throws -> ImageDataResult {
        try await exchanges.value(
            for: key, priority: TaskPriority(downloadPriority: options.priority),
            cancellationError: MagpieError.requestFailed(reason: .cancelled(request.url)), progress: progress,
            onJoin: { self.counters.dedupeHit() }
        ) { reporter in
            try await self.perform(request: request, options: options, progress: reporter).get()
        }
    }

    /// Checks the scheme and applies the downloader's and the request's modifiers.
    private func prepare(url: URL, options: ImageDownloadOptions) async throws -> ImageRequest {
        var request = ImageRequest(url: url)
        for modifier in [configuration.requestModifier, options.requestModifier].compactMap({ $0 }) {
            guard let modified = await modifier.modified(for: request) else {
                throw MagpieError.requestFailed(reason: .cancelledByModifier(url))
            }
            request = modified
        }
        switch request.url.scheme?.lowercased() {
        case "http", "https":
            guard request.url.host?.isEmpty == false else { throw MagpieError.requestFailed(reason: .invalidURL(request.url.absoluteString)) }
        case "file", "data":
            // A server fetching URLs its clients name must not hand out local files (nor decode inline bytes).
            if networkGuard != nil {
                throw MagpieError.requestFailed(reason: .networkAccessRefused(request.url, reason: "only http and https URLs are allowed"))
            }
        case nil: throw MagpieError.requestFailed(reason: .invalidURL(request.url.absoluteString))
        default: throw MagpieError.requestFailed(reason: .unsupportedScheme(request.url))
        }
        return request
    }

    /// Runs one shared exchange to its end: slot, attempts, retries; then answers every caller.
    private func perform(
        request: ImageRequest, options: ImageDownloadOptions, progress: SharedWork<String, ImageDataResult>.ProgressReporter
    ) async -> Result<ImageDataResult, MagpieError> {
        let timeout = options.timeout ?? configuration.downloadTimeout
        let result: Result<ImageDataResult, MagpieError>
        do {
            result = .success(try await attempts(request: request, options: options, timeout: timeout, progress: progress))
        } catch {
            result = .failure(TransportError.map(error, url: request.url, timeout: timeout))
        }
        counters.finished(result)
        switch result {
        case .success(let value):
            configuration.logger.debug("downloaded", metadata: [
                "url": "\(request.url)", "status": "\(value.response?.statusCode ?? 0)", "bytes": "\(value.data.count)",
                "ms": "\(value.metrics.total.milliseconds)",
            ])
            delegate?.imageDownloader(self, didFinish: request.url, result: result, metrics: value.metrics)
        case .failure(let error):
            if !error.isCancellation {
                configuration.logger.debug("download failed", metadata: ["url": "\(request.url)", "error": "\(error)"])
            }
            delegate?.imageDownloader(self, didFinish: request.url, result: result, metrics: DownloadMetrics())
        }
        return result
    }

    /// Attempts under a download slot, retried as the strategy says. The slot is given back
    /// while waiting for a retry so other downloads can run.
    private func attempts(
        request: ImageRequest, options: ImageDownloadOptions, timeout: Duration,
        progress: SharedWork<String, ImageDataResult>.ProgressReporter
    ) async throws -> ImageDataResult {
        let strategy = options.retryStrategy ?? configuration.retryStrategy
        let host = "\(request.url.host ?? ""):\(request.url.port ?? -1)"
        var retries = 0
        var queued = Duration.zero
        while true {
            let waitStart = ContinuousClock.now
            if let limiter = configuration.rateLimiter {
                do {
                    try await limiter.acquire()
                } catch {
                    throw MagpieError.requestFailed(reason: .cancelled(request.url))
                }
            }
            let slot = try await scheduler.acquire(host: host, priority: options.priority)
            queued += ContinuousClock.now - waitStart
            let outcome: Result<ImageDataResult, MagpieError>
            do {
                outcome = .success(try await transfer(request: request, options: options, timeout: timeout, progress: progress).run())
            } catch {
                outcome = .failure(TransportError.map(error, url: request.url, timeout: timeout))
            }
            scheduler.release(slot)
            switch outcome {
            case .success(var result):
                result.metrics.queued = queued
                result.metrics.retryCount = retries
                return result
            case .failure(let error):
                if Task.isCancelled { throw MagpieError.requestFailed(reason: .cancelled(request.url)) }
                guard let strategy else { throw error }
                let retryAfter: Duration? = if case .responseFailed(let reason) = error { reason.response.retryAfter() } else { nil }
                let context = RetryContext(url: request.url, error: error, retriedCount: retries, retryAfter: retryAfter)
                guard case .retry(let delay) = await strategy.retry(context: context) else { throw error }
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    throw MagpieError.requestFailed(reason: .cancelled(request.url))
                }
                retries += 1
                counters.retried()
                configuration.logger.debug("retrying", metadata: ["url": "\(request.url)", "retry": "\(retries)", "error": "\(error)"])
            }
        }
    }

    private func transfer(
        request: ImageRequest, options: ImageDownloadOptions, timeout: Duration,
        progress: SharedWork<String, ImageDataResult>.ProgressReporter
    ) -> HTTPTransfer {
        var transfer = HTTPTransfer(
            client: clientOwner.client, networkGuard: networkGuard, configuration: configuration, request: request, timeout: timeout,
            deadlines: deadlines, redirectHandler: options.redirectHandler, validators: options.validators,
            spoolDirectory: configuration.bodyFileThreshold == nil ? nil : (options.spoolDirectory ?? configuration.spoolDirectory).path,
            onSend: { [self] request in
                counters.requestSent()
                delegate?.imageDownloader(self, willSend: request)
            },
            onResponse: { [self] response in
                counters.responseReceived(status: response.statusCode)
                delegate?.imageDownloader(self, didReceive: response)
            },
            onProgress: { value, final in progress.report(value, final: final) })
        transfer.onSpool = { [counters] resumed in counters.spooled(resumed: resumed) }
        return transfer
    }
}

/// Shuts the HTTP client down when the downloader goes away (AsyncHTTPClient requires it).
private final class HTTPClientOwner: Sendable {
    let client: HTTPClient

    init(client: HTTPClient) { self.client = client }

    deinit {
        client.shutdown { _ in }
    }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
