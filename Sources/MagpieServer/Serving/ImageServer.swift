import Logging
import Magpie
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image server with imgproxy's URL API: `/{signature}/{option}/…/plain/{source URL}[@{ext}]` or
/// `/{signature}/{option}/…/{base64url source URL}[.{ext}]`, answered from three layers (encoded results in memory,
/// results on disk, then the pipeline: source bytes cached by their HTTP caching rules, decoded, processed, encoded).
///
/// Mount it in a Hummingbird application with ``addRoutes(to:)``, or run it with ``ImageServerService``. Identical
/// concurrent requests share one job; jobs are limited by workers and a queue, past which requests get 429.
public final class ImageServer: Sendable {
    /// The settings it was made with.
    public let configuration: ImageServerConfiguration
    /// The pipeline that fetches and decodes remote sources (its cache holds their bytes), behind the SSRF guard.
    public let manager: ImageManager
    /// The pipeline for `local:///` sources: no network at all, so the guard (which refuses files) is not in the way.
    let localManager: ImageManager
    /// Counters and histograms, rendered at `/metrics`.
    public let metrics: ServerMetrics
    let logger: Logger
    let signer: ImageURLSigner
    /// thumbor's `SECURITY_KEY`, for thumbor's URLs.
    let thumborSigner: ThumborSigner
    let sources: SourcePolicy
    /// Encoded results by result key: the second layer. A ``DiskStorage`` in the cache folder unless the server was
    /// made with another ``DataCaching`` backend.
    let results: any DataCaching
    /// Encoded results in memory: the first layer, where a hit is answered without the disk, a worker or the
    /// pipeline. A segmented LRU (``ImageServer/resultMemoryConfig(capacity:)``).
    let memory: MemoryStore<ServedImage>
    let admission: JobAdmission
    /// One timer for the server's deadlines: jobs waiting for a worker, and processing.
    let deadlines = DeadlineWatch()
    let jobs = SharedWork<String, ProducedImage>()
    /// Results on their way to the disk layer; ``shutdown()`` waits for them.
    let resultWrites = PendingWork()
    /// Paths up to 4 KiB (with --insecure-unsigned any client makes valid ones), each kept once its result is served
    /// from a cache: cold traffic sends every path once, and a memo full of those was most of the live heap.
    let parsedRequests = ParseMemo<ParsedServeRequest>(capacity: 4096, maximumTextBytes: 4096)
    /// `Accept` headers → the format part of an `auto` result key (clients send a handful of distinct ones; any client
    /// chooses its own, so only the short ones browsers send are remembered).
    let acceptKeys = ParseMemo<String>(capacity: 256, maximumTextBytes: 512)
    private let accepting = Mutex(true)
    /// `Cache-Control` of every image answer.
    let resultCacheControl: String
    /// The decoded watermark image and its name (the first 16 hex digits of its bytes' SHA-256, so a new file makes
    /// new results), from ``ImageServerConfiguration/watermark``.
    let watermark: (image: Image, name: String)?
    /// What smart crops ask for faces (``ImageServerConfiguration/faceDetection``); it keeps their answers per source.
    let faceDetector: FaceDetector?

    /// False once shutdown began: `/ready` answers 503 so load balancers stop sending while requests in flight finish.
    public var isReady: Bool { accepting.withLock { $0 } }

    /// Marks the server as shutting down (``isReady`` false); it still answers what arrives.
    public func beginShutdown() {
        accepting.withLock { $0 = false }
    }

    /// A server with `configuration`; nothing listens until it is mounted or run.
    ///
    /// - Parameters:
    ///   - configuration: The settings.
    ///   - resultCache: Where encoded results are kept (an S3-compatible store, a shared volume…); nil (the default)
    ///     for a ``DiskStorage`` named `results` in ``ImageServerConfiguration/cacheDirectory``, with half the disk
    ///     budget and a 30-day expiry.
    ///   - logger: Where the server logs.
    /// - Throws: ``ImageServerConfigurationError`` for a bad key, salt or network; ``MagpieError/cacheFailed(reason:)``
    ///   when the cache folder cannot be created.
    public init(
        configuration: ImageServerConfiguration, resultCache: (any DataCaching)? = nil,
        logger: Logger = Logger(label: "magpie.server")
    ) throws {
        self.configuration = configuration
        self.logger = logger
        resultCacheControl = "public, max-age=\(configuration.maxAge.components.seconds)"
        do {
            signer = try ImageURLSigner(hexPairs: configuration.signingKeys)
            thumborSigner = ThumborSigner(securityKey: configuration.thumborSecurityKey)
        } catch {
            throw ImageServerConfigurationError(message: "\(error)")
        }
        var networks: [IPNetwork] = []
        for text in configuration.allowedNetworks {
            guard let network = IPNetwork(text) else {
                throw ImageServerConfigurationError(message: "invalid network \"\(text)\" (expected CIDR such as 10.0.0.0/8)")
            }
            networks.append(network)
        }
        do {
            try ServeOptions.validate(presets: configuration.presets)
        } catch {
            throw ImageServerConfigurationError(message: "preset: \(error.message)")
        }
        if let bytes = configuration.watermark {
            do {
                let image = try ImageCoderRegistry.shared.decode(bytes)
                watermark = (image, String(ServedImage.entityTag(of: bytes).dropFirst().prefix(16)))
            } catch {
                throw ImageServerConfigurationError(message: "the watermark image cannot be decoded: \(error)")
            }
        } else {
            watermark = nil
        }
        sources = SourcePolicy(allowedPrefixes: configuration.allowedSourcePrefixes, localRoot: configuration.localRoot)
        if let root = configuration.localRoot, sources.localRoot == nil {
            throw ImageServerConfigurationError(message: "local root \"\(root)\" does not exist")
        }
        let directory = configuration.cacheDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("magpie-serve", isDirectory: true)
        // Half the disk budget for source bytes, half for results: a result is usually far smaller than its source,
        // but sources are what a cold start needs most.
        let half = max(1, configuration.diskCacheSize / 2)
        let originals = try DiskStorage(config: DiskStorage.Config(name: "sources", directory: directory, sizeLimit: half))
        results = try resultCache
            ?? DiskStorage(config: DiskStorage.Config(name: "results", directory: directory, sizeLimit: half, expiration: .days(30)))
        // Decoded sources are not kept in memory: the encoded results are (``memory``), at a fraction of the size.
        let cache = ImageCache(name: "magpie-serve", memoryCache: nil, dataCache: originals)
        var download = ImageDownloader.Configuration()
        download.downloadTimeout = configuration.downloadTimeout
        download.maximumResponseSize = configuration.maximumSourceBytes
        download.networkAccessPolicy = NetworkAccessPolicy(
            allowedNetworks: networks, allowedSourcePrefixes: configuration.allowedSourcePrefixes)
        download.logger = logger
        manager = ImageManager(downloader: ImageDownloader(name: "magpie.server", configuration: download), cache: cache)
        localManager = ImageManager(loader: DataProviderLoader(), cache: cache)
        memory = MemoryStore(config: Self.resultMemoryConfig(capacity: configuration.memoryCacheSize))
        admission = JobAdmission(workers: configuration.workers, queueLength: configuration.effectiveQueueLength, deadlines: deadlines)
        let metrics = ServerMetrics()
        self.metrics = metrics
        faceDetector = configuration.faceDetection.map {
            FaceDetector(configuration: $0, report: { metrics.faceDetection($0) }, beforeDetection: configuration.beforeFaceDetection)
        }
        if configuration.allowsUnsigned {
            logger.warning("unsigned URLs are accepted (--insecure-unsigned): anyone can make this server fetch and process")
        }
        if signer.isEmpty && thumborSigner.isEmpty && !configuration.allowsUnsigned {
            logger.warning("no signing key: every image request will be refused (give MAGPIE_KEY/MAGPIE_SALT, --key-file or --insecure-unsigned)")
        }
        for (index, pair) in configuration.signingKeys.enumerated() where pair.key.utf8.count < 64 {
            // imgproxy's advice too: an HMAC key shorter than its hash's block of randomness is easier to guess.
            logger.warning(
                "signing key \(index + 1) is \(pair.key.utf8.count / 2) bytes; use at least 32 random bytes (openssl rand -hex 32)")
        }
    }

    /// Answers one image request (the catch-all route): parse and verify, then memory, disk, or a job.
    ///
    /// - Parameter request: Method, raw path and the headers that matter.
    /// - Returns: The response; errors are responses too (400, 403, 404, 413, 415, 422, 429, 502, 503, 504).
    public func respond(to request: ImageServerRequest) async -> ImageServerResponse {
        let start = ContinuousClock.now
        var response: ImageServerResponse
        var reason: String?
        if request.method != "GET" && request.method != "HEAD" {
            response = failureResponse(ServerFailure(status: 405, message: "only GET and HEAD"), method: request.method)
            response.headers.append(("Allow", "GET, HEAD"))
        } else {
            do {
                let parsed: ParsedServeRequest
                do {
                    parsed = try parsedRequest(forPath: request.path)
                } catch {
                    throw ServerFailure(error)
                }
                if let meta = try await thumborMetaResponse(to: request, parsed: parsed) {
                    response = meta
                } else {
                    let (image, layer) = try await image(for: request, parsed: parsed)
                    response = imageResponse(image, layer: layer, parsed: parsed, request: request)
                }
            } catch {
                let failure = (error as? ServerFailure) ?? ServerFailure(status: 500, message: "internal error", reason: "\(error)")
                if let kind = failure.originErrorKind { metrics.originError(kind) }
                // Origin failures and overload are the access log's business; a 500 is ours and needs its detail.
                if failure.status == 500 {
                    logger.error("request failed", metadata: ["error": "\(failure.reason ?? failure.message)"])
                }
                reason = failure.reason
                response = failureResponse(failure, method: request.method)
            }
        }
        // Cancelled: the connection is gone (the client left, or shutdown's timeout cut it), so nobody gets this answer.
        return finished(response, for: request, since: start, reason: reason, aborted: Task.isCancelled)
    }

    /// The answer to `request` when its result is in memory, computed on the calling thread without suspending;
    /// nil for anything else (a miss, a bad or refused request), which ``respond(to:)`` then answers. The HTTP
    /// service calls it on the connection's event loop, so a repeat skips the hops to and from a task.
    func memoryHitResponse(to request: ImageServerRequest) -> ImageServerResponse? {
        let start = ContinuousClock.now
        guard request.method == "GET" || request.method == "HEAD" else { return nil }
        let known = parsedRequests.knownValue(for: request.path)
        guard let parsed = known ?? (try? parseRequest(path: request.path)),
            !parsed.hasExpired(),
            sources.allows(parsed.request.source),
            let hit = memory.value(forKey: resultKey(parsed, accept: request.accept))
        else { return nil }
        if known == nil { parsedRequests.remember(parsed, for: request.path) }
        metrics.cacheLayer("memory")
        return finished(imageResponse(hit, layer: "memory", parsed: parsed, request: request), for: request, since: start)
    }

    /// Counts, times and logs an answer, and gives it the request's id: the same for every path to it.
    private func finished(
        _ response: ImageServerResponse, for request: ImageServerRequest, since start: ContinuousClock.Instant,
        reason: String? = nil, aborted: Bool = false
    ) -> ImageServerResponse {
        var response = response
        if let id = request.requestID { response.headers.append(("X-Request-ID", id)) }
        let elapsed = ContinuousClock.now - start
        if aborted {
            metrics.requestAborted()
        } else {
            metrics.request(route: "image", status: response.status, bytesSent: response.body.count)
        }
        metrics.phase(.total, elapsed)
        if configuration.accessLog {
            AccessLogEntry(
                request: request, status: aborted ? "aborted" : String(response.status), bytes: aborted ? 0 : response.body.count,
                elapsed: elapsed, cacheLayer: response.cacheLayer, reason: reason
            ).write(format: configuration.accessLogFormat, logger: logger, writer: configuration.accessLogWriter)
        }
        return response
    }

    /// The verified, parsed request for `path`: from ``parsedRequests`` when its result was served from a cache before,
    /// else parsed now (and not kept: the caller remembers it when a cache answers).
    func parsedRequest(forPath path: String) throws(ServeRequestError) -> ParsedServeRequest {
        if let known = parsedRequests.knownValue(for: path) { return known }
        return try parseRequest(path: path)
    }

    /// `path` verified and parsed, without the memo.
    private func parseRequest(path: String) throws(ServeRequestError) -> ParsedServeRequest {
        ParsedServeRequest(
            try ServeRequest.parse(
                path: path, signer: signer, allowsUnsigned: configuration.allowsUnsigned,
                presets: configuration.presets, maximumOptions: configuration.maximumOptions,
                allowsSecurityOptions: configuration.allowsSecurityOptions, thumborSigner: thumborSigner),
            defaultQuality: defaultQuality, watermarkName: watermark?.name, detector: faceDetector)
    }

    /// The result for `request` (parsed as `known`) and the layer it came from.
    private func image(for request: ImageServerRequest, parsed known: ParsedServeRequest) async throws -> (ServedImage, String) {
        // imgproxy's answer to an expired URL.
        if known.hasExpired() { throw ServerFailure(status: 404, message: "the URL has expired") }
        let parsed = known.request
        let source = try sources.pipelineSource(for: parsed.source, maximumBytes: configuration.maximumSourceBytes)
        let key = resultKey(known, accept: request.accept)
        if let hit = memory.value(forKey: key) {
            parsedRequests.remember(known, for: request.path)
            metrics.cacheLayer("memory")
            return (hit, "memory")
        }
        // A result still being written (a request a moment ago made it) is waited for, not made again.
        await resultWrites.waitUntilFinished(key: key)
        if let entry = try? await results.cachedEntry(forKey: key, extendingExpiration: nil) {
            let image = ServedImage(data: entry.data, validators: entry.metadata.validators)
            // Read back from disk: asked for before, so protected in memory at once.
            memory.store(image, forKey: key, admission: .protected)
            parsedRequests.remember(known, for: request.path)
            metrics.cacheLayer("disk")
            return (image, "disk")
        }
        let produced: ProducedImage
        do {
            produced = try await jobs.value(for: key) { _ in
                try await self.admission.run(timeout: self.configuration.processingTimeout, queued: { self.metrics.phase(.queue, $0) }) {
                    try await self.produce(try await self.loadingThumborWatermarks(parsed), source: source, accept: request.accept, key: key)
                }
            }
        } catch let refusal as JobAdmission.Refusal {
            switch refusal {
            case .overloaded: throw ServerFailure(status: 429, message: "too many requests")
            case .waitedTooLong: throw ServerFailure(status: 503, message: "no worker free in time")
            }
        } catch let failure as ServerFailure {
            throw failure
        } catch let error as MagpieError {
            throw ServerFailure(error)
        } catch is CancellationError {
            throw ServerFailure(status: 503, message: "cancelled")
        }
        metrics.cacheLayer(produced.layer)
        return (produced.image, produced.layer)
    }

    /// The result cache key: the source, everything that changes the output, and the format (for `auto`, which of
    /// AVIF and WebP the `Accept` header allows: the choice is a function of that and the source). The signature is
    /// not part of it, so rotated keys share results.
    func resultKey(_ parsed: ParsedServeRequest, accept: String?) -> String {
        if let fixed = parsed.fixedFormatKey {
            guard !configuration.enforcedFormats.isEmpty, case .fixed(let format) = parsed.request.options.format else { return fixed }
            return parsed.keyPrefix + enforcedFormat(format, accept: accept).rawValue
        }
        return parsed.keyPrefix + acceptKeys.value(for: accept ?? "", parse: Self.autoFormatKey)
    }

    /// imgproxy's `ENFORCE_*`: the first enforced format `accept` names with a weight above 0, else `format`.
    func enforcedFormat(_ format: ImageFormat, accept: String?) -> ImageFormat {
        guard !configuration.enforcedFormats.isEmpty else { return format }
        let header = AcceptHeader(accept)
        return configuration.enforcedFormats.first {
            ImageCoderRegistry.shared.canEncode($0) && (header.explicitQuality(of: $0.mimeType) ?? 0) > 0
        } ?? format
    }

    /// The format part of an `auto` result key for an `Accept` header ("" when there is none). Negotiation reads only
    /// the explicit weights of the formats it can pick (``ImageCoderRegistry/negotiatedFormats``: AVIF, WebP, JPEG XL);
    /// equal weights, equal choice.
    private static func autoFormatKey(accept: String) -> String {
        let header = AcceptHeader(accept.isEmpty ? nil : accept)
        return "auto" + ImageCoderRegistry.shared.negotiatedFormats.map { ";\($0.rawValue)=\(header.explicitQuality(of: $0.mimeType) ?? 0)" }.joined()
    }

    /// The memory layer's settings for `capacity` bytes of results. Behind a CDN most results are asked for once:
    /// on probation (an eighth of the capacity) until a second request or a read back from the disk layer, they
    /// cannot push out the results asked for again and again; without the split, a minute of cold requests filled
    /// 128 MiB with results never read back (two thirds of the server's RSS). One result may take a quarter. Results
    /// never expire here: the disk layer's expiry and the URL's own govern them.
    static func resultMemoryConfig(capacity: Int) -> MemoryStoreConfig {
        MemoryStoreConfig(
            totalCostLimit: max(0, capacity), expiration: .never, accessExtending: .none, cleanInterval: 0,
            probationFraction: 1.0 / 8, maximumEntryCost: max(0, capacity) / 4)
    }

    /// Stops the pipeline and flushes the caches; call after the HTTP server stopped taking requests.
    public func shutdown() async {
        await manager.shutdown()
        await localManager.shutdown()
        try? await manager.downloader?.shutdown()
        await resultWrites.waitUntilIdle()
        try? await results.flush()
    }
}

/// A configuration the server cannot start with; the message names the bad value.
public struct ImageServerConfigurationError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let message: String
    /// The message.
    public var description: String { message }
}
