import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The server's parts that only thumbor's URLs use: the images of `watermark(…)` fetched under the source rules,
/// `max_age(…)`'s `Cache-Control`, and `meta/`'s JSON answer.
extension ImageServer {
    /// `request` with its thumbor watermark images loaded: each URL read as thumbor's image URL is (no scheme: `http`),
    /// then through the same source rules as the image (`--allow-source`, `--local-root`, and the network guard on
    /// every connection) and the same source cache. A request with none is returned as it is.
    ///
    /// - Throws: A ``ServerFailure`` naming the watermark: 400 for a URL that is not one, the source rules' 403, or the
    ///   fetch's or decoder's failure (thumbor answers 400 for a watermark it cannot load).
    func loadingThumborWatermarks(_ request: ServeRequest) async throws -> ServeRequest {
        guard let urls = request.options.thumbor?.watermarkURLs, !urls.isEmpty else { return request }
        var options = request.options
        for url in urls {
            let image: Image
            do {
                let served = try ThumborOptions.image(Substring(url), decoded: true)
                let source = try sources.pipelineSource(for: served, maximumBytes: configuration.maximumSourceBytes)
                var decoding = decodingOptions(for: ServeOptions())
                decoding.onlyFirstFrame = true
                let pipeline: ImageManager
                if case .provider = source { pipeline = localManager } else { pipeline = manager }
                image = try await pipeline.retrieveImage(with: source, options: [
                    .decodingOptions(decoding), .respectCacheControl, .memoryCacheWrites(false), .memoryCacheReads(false),
                    .downloadTimeout(configuration.downloadTimeout),
                ]).image
            } catch let error as ServeRequestError {
                throw ServerFailure(status: 400, message: "watermark: \(error.message)")
            } catch let failure as ServerFailure {
                throw ServerFailure(status: failure.status, message: "watermark \(url): \(failure.message)", reason: failure.reason)
            } catch let error as MagpieError {
                let failure = ServerFailure(error)
                throw ServerFailure(status: 400, message: "watermark \(url): \(failure.message)", reason: failure.reason ?? "\(error)")
            }
            options.thumborWatermarks[url] = image
        }
        return ServeRequest(source: request.source, options: options)
    }

    /// `Cache-Control` of an image answer: thumbor's `max_age(N)` when the URL has one, else the server's (imgproxy's
    /// `expires` shortens it).
    func thumborCacheControl(_ parsed: ParsedServeRequest) -> String? {
        parsed.request.options.thumbor?.maxAge.map { "public, max-age=\($0)" }
    }

    /// thumbor's `meta/` answer for `request` (parsed as `known`), or nil when it is not a `meta/` URL. The JSON comes
    /// from the same ``ThumborProcessor`` run the image would, so they agree; it is not kept in the result caches (its
    /// key could never be an image's: the options' text starts `thumbor-meta`).
    func thumborMetaResponse(to request: ImageServerRequest, parsed known: ParsedServeRequest) async throws -> ImageServerResponse? {
        guard let thumbor = known.request.options.thumbor, thumbor.meta else { return nil }
        let source = try sources.pipelineSource(for: known.request.source, maximumBytes: configuration.maximumSourceBytes)
        let json: String
        do {
            json = try await admission.run(timeout: configuration.processingTimeout, queued: { self.metrics.phase(.queue, $0) }) {
                try await self.thumborMetadata(try await self.loadingThumborWatermarks(known.request), source: source)
            }
        } catch let refusal as JobAdmission.Refusal {
            switch refusal {
            case .overloaded: throw ServerFailure(status: 429, message: "too many requests")
            case .waitedTooLong: throw ServerFailure(status: 503, message: "no worker free in time")
            }
        } catch let error as MagpieError {
            throw ServerFailure(error)
        } catch is CancellationError {
            throw ServerFailure(status: 503, message: "cancelled")
        }
        let body = Data(json.utf8)
        let headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("Content-Length", String(body.count)),
            ("Cache-Control", thumborCacheControl(known) ?? resultCacheControl),
        ]
        return ImageServerResponse(status: 200, headers: headers, body: request.method == "HEAD" ? Data() : body, cacheLayer: "none")
    }

    /// Fetches and decodes the source, runs the thumbor processor and describes what it did.
    private func thumborMetadata(_ request: ServeRequest, source: Source) async throws -> String {
        let options = request.options
        guard let thumbor = options.thumbor else { throw ServerFailure(status: 500, message: "internal error", reason: "meta without thumbor") }
        let decoding = decodingOptions(for: options)
        let pipeline: ImageManager
        if case .provider = source { pipeline = localManager } else { pipeline = manager }
        let retrieved = try await pipeline.retrieveImage(with: source, options: [
            .decodingOptions(decoding), .respectCacheControl, .memoryCacheWrites(false), .memoryCacheReads(false),
            .downloadTimeout(configuration.downloadTimeout), .waitForCache,
        ])
        let sourceImage = try Self.selectingPages(retrieved.image, options: options)
        let detector = faceDetector.map { SourceBoundDetector($0, sourceKey: request.source.cacheIdentity + "\n" + options.detectionContext) }
        let processor = ThumborProcessor(options: thumbor, detector: detector, watermarks: options.thumborWatermarks)
        let limit = configuration.processingTimeout
        let answer = try await deadlines.answer(within: limit) {
            try await BoundedExecutor.processing.run { isCancelled in
                let (image, trace) = try processor.run(sourceImage, context: ImageProcessingContext(decodingOptions: decoding, isCancelled: isCancelled))
                return (image.pixelSize, trace)
            }
        }
        guard let (size, trace) = answer else { throw ServerFailure(status: 503, message: "processing took longer than \(limit)") }
        return ThumborMetadata(url: request.source, size: size, frameCount: sourceImage.frames.count, trace: trace).json
    }
}
