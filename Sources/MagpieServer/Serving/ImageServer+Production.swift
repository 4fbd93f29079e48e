import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A result made by a job, and where its source came from (`original` when its bytes were cached, else `none`).
struct ProducedImage: Sendable {
    let image: ServedImage
    let layer: String
}

/// The miss path of one result: fetch and decode the source (shrunk while decoding when the first step is a resize),
/// process, encode, store. Runs inside a worker; identical requests share it.
extension ImageServer {
    func produce(_ request: ServeRequest, source: Source, accept: String?, key: String) async throws -> ProducedImage {
        let options = request.options
        let decoding = decodingOptions(for: options)
        let fetchStart = ContinuousClock.now
        let pipeline: ImageManager
        if case .provider = source { pipeline = localManager } else { pipeline = manager }
        // No .waitForCache: the source's bytes are written after the answer, and the next request for the source
        // (another size) waits for that write rather than missing it (the pipeline's reads wait for writes of the
        // same key in flight).
        var retrieval: [MagpieOption] = [
            .decodingOptions(decoding), .respectCacheControl, .memoryCacheWrites(false), .memoryCacheReads(false),
            .downloadTimeout(configuration.downloadTimeout),
        ]
        // imgproxy's cachebuster: a new value is a new result, and the source is asked again rather than reused.
        if !options.cachebuster.isEmpty { retrieval.append(.revalidate) }
        let retrieved = try await pipeline.retrieveImage(with: source, options: retrieval)
        let fetched = ContinuousClock.now - fetchStart
        if let download = retrieved.downloadMetrics {
            metrics.phase(.download, download.total)
            metrics.sourceBytes(download.bytesReceived)
            metrics.phase(.decode, max(.zero, fetched - download.total))
        } else {
            metrics.phase(.decode, fetched)
        }
        if let limit = options.maxSourceBytes, let bytes = await retrieved.data(), bytes.count > limit {
            throw ServerFailure(status: 413, message: "source too large", reason: "\(bytes.count) bytes, over max_src_file_size \(limit)")
        }
        // imgproxy's skip_processing: a source in a listed format is answered with its own bytes.
        if options.skipProcessing.contains(retrieved.image.format), options.format == .auto || options.format == .fixed(retrieved.image.format),
            let original = await retrieved.data()
        {
            let image = ServedImage(
                data: original, format: retrieved.image.format, lastModified: await sourceLastModified(source, retrieved: retrieved), variesOnAccept: false)
            memory.store(image, forKey: key, admission: .probation)
            return ProducedImage(image: image, layer: retrieved.cacheType == .none ? "none" : "original")
        }
        let sourceImage = try Self.selectingPages(retrieved.image, options: options)
        // Bound to this source, so every size of one photo shares the detector's answer; it also tells whether the
        // crop fell back to attention (detection past its budget or failed).
        let detector = faceDetector.map { SourceBoundDetector($0, sourceKey: request.source.cacheIdentity + "\n" + options.detectionContext) }
        let processor = options.pipeline(watermark: watermark, detector: detector)
        let limit = configuration.processingTimeout
        // The answer goes out at the limit; the job is cancelled (processors and encoders check between rows) and
        // winds down after. Both stages are the pipeline's, on its processing executor.
        let produced = try await deadlines.answer(within: limit) {
            do {
                let processStart = ContinuousClock.now
                let processed = try await pipeline.processImage(.image(sourceImage), with: processor, decodingOptions: decoding)
                self.metrics.phase(.process, ContinuousClock.now - processStart)
                var choice = options.outputFormat(
                    accept: accept, source: sourceImage.format, hasAlpha: !processed.pixels.isOpaque,
                    isAnimated: processed.isAnimated)
                if case .fixed = options.format, !self.configuration.enforcedFormats.isEmpty {
                    choice.format = self.enforcedFormat(choice.format, accept: accept)
                    choice.variesOnAccept = true
                }
                var encoding = options.encodingOptions(for: choice, defaultQuality: self.defaultQuality)
                // libavif's default effort takes seconds per megapixel; 8 is what image servers use for on-line work.
                if choice.format == .avif { encoding.speed = 8 }
                let encodeStart = ContinuousClock.now
                let data = try await pipeline.serializeImage(
                    processed, with: ResultSerializer(format: choice.format, options: encoding, maxBytes: options.maxBytes))
                self.metrics.phase(.encode, ContinuousClock.now - encodeStart)
                return (data, (choice.format, choice.variesOnAccept))
            } catch MagpieError.processingFailed(reason: .cancelled) {
                // The deadline answered 503 and cancelled this job: its processor or encoder stopped between rows
                // (a 49 MP PNG takes longer to write than to make).
                self.metrics.jobCancelled()
                throw MagpieError.processingFailed(reason: .cancelled)
            }
        }
        guard let (encoded, format) = produced else {
            throw ServerFailure(status: 503, message: "processing took longer than \(limit)")
        }
        var image = ServedImage(
            data: encoded, format: format.0, lastModified: await sourceLastModified(source, retrieved: retrieved), variesOnAccept: format.1)
        if detector?.didFallBack == true {
            // A smart crop made without the faces it should have had: answered, briefly cacheable, never kept. The
            // detection goes on and keeps its answer, so the next request gets the faces (thumbor does not store
            // such results either).
            image.isProvisional = true
            return ProducedImage(image: image, layer: retrieved.cacheType == .none ? "none" : "original")
        }
        memory.store(image, forKey: key, admission: .probation)
        // Written after the answer, not before: the memory layer serves the next requests meanwhile, and a write
        // that evicts or meets a slow disk never delays this one. Shutdown waits for these writes.
        let results = self.results, logger = self.logger, validators = image.validators
        resultWrites.start(keys: [key]) {
            do {
                try await results.storeData(encoded, forKey: key, expiration: nil, validators: validators)
            } catch {
                // A full or failing disk costs a later request a job, never an answer.
                logger.warning("result not stored", metadata: ["error": "\(error)"])
            }
        }
        return ProducedImage(image: image, layer: retrieved.cacheType == .none ? "none" : "original")
    }

    /// Decoding shrinks a source to what the options allow (JPEG DCT scaling, WebP scaled decoding:
    /// ``ServeOptions/decodingTarget``): a 2K photo thumbnailed to 512 decodes a quarter of the pixels. Limits are the
    /// server's (sources, results, working memory); `color:srgb` converts; `auto_rotate:0` keeps the stored orientation.
    func decodingOptions(for options: ServeOptions) -> ImageDecodingOptions {
        var decoding = ImageDecodingOptions.default
        decoding.limits.maxPixelsPerFrame = options.maxSourcePixels ?? configuration.maximumPixels
        decoding.limits.maxFrameCount = options.maxSourceFrames ?? configuration.maximumFrames
        decoding.limits.maxResultDimension = configuration.maximumResultDimension
        decoding.limits.maxWorkingBytes = configuration.maximumWorkingMemory
        decoding.onlyFirstFrame = options.firstFrameOnly || (options.page == 0 && options.pages == 1)
        decoding.appliesOrientation = options.autoRotate
        if options.color == .srgb { decoding.colorSpace = .sRGB }
        if let target = options.decodingTarget {
            decoding.targetSize = target.size
            decoding.contentMode = target.mode
        }
        return decoding
    }

    /// The quality of `format` when the URL gives none: the configuration's for that format, else imgproxy's.
    func defaultQuality(_ format: ImageFormat) -> Int {
        configuration.formatQuality[format] ?? configuration.defaultQuality ?? ServeOptions.defaultQuality(format)
    }

    /// imgproxy's `page` and `pages`: the frames from `page`, `pages` of them (all that follow when not given).
    ///
    /// - Throws: A 422 ``ServerFailure`` when `page` is past the last frame.
    static func selectingPages(_ image: Image, options: ServeOptions) throws -> Image {
        guard options.page > 0 || options.pages != nil else { return image }
        guard options.page < image.frames.count else {
            throw ServerFailure(status: 422, message: "page \(options.page) is past the source's last (it has \(image.frames.count))")
        }
        let end = options.pages.map { min(image.frames.count, options.page + $0) } ?? image.frames.count
        var selected = try Image(frames: Array(image.frames[options.page..<end]), loopCount: image.loopCount, format: image.format, scale: image.scale)
        selected.colorProfile = image.colorProfile
        selected.metadata = image.metadata
        return selected
    }

    /// The source's `Last-Modified` for the response: from the validators the pipeline handed back with the source
    /// (no trip to the originals cache), else read from that cache; a local file's modification time.
    func sourceLastModified(_ source: Source, retrieved: RetrieveImageResult) async -> String? {
        switch source {
        case .network(let resource):
            if let validators = retrieved.validators { return validators.lastModified }
            return try? await manager.cache.dataCache?.cachedMetadata(forKey: resource.cacheKey)?.validators.lastModified
        case .provider(let provider):
            guard let file = provider as? LocalFileImageDataProvider,
                let attributes = try? FileManager.default.attributesOfItem(atPath: file.fileURL.path),
                let date = attributes[.modificationDate] as? Date
            else { return nil }
            return HTTPDate.format(date)
        }
    }
}

