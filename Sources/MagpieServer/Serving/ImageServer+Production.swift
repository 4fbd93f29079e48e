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
        let retrieved = try await pipeline.retrieveImage(
            with: source,
            options: [
                .decodingOptions(decoding), .respectCacheControl, .memoryCacheWrites(false), .memoryCacheReads(false),
                .downloadTimeout(configuration.downloadTimeout),
                // The source's Last-Modified is read back from the originals cache for the response, so its write
                // must have landed (it takes well under a millisecond; under load it otherwise sometimes had not).
                .waitForCache,
            ])
        let fetched = ContinuousClock.now - fetchStart
        if let download = retrieved.downloadMetrics {
            metrics.phase(.download, download.total)
            metrics.sourceBytes(download.bytesReceived)
            metrics.phase(.decode, max(.zero, fetched - download.total))
        } else {
            metrics.phase(.decode, fetched)
        }
        let sourceImage = retrieved.image
        let limit = configuration.processingTimeout
        // The answer goes out at the limit; the job is cancelled (processors check between passes) and winds down after.
        let produced = try await deadlines.answer(within: limit) {
            try await BoundedExecutor.processing.run { isCancelled in
                let context = ImageProcessingContext(decodingOptions: decoding, isCancelled: isCancelled)
                let processStart = ContinuousClock.now
                let processed: Image
                do {
                    guard let image = try options.processor.process(item: .image(sourceImage), context: context) else {
                        throw MagpieError.processingFailed(reason: .processorFailed(identifier: options.processor.identifier))
                    }
                    processed = image
                } catch MagpieError.processingFailed(reason: .cancelled) {
                    // The deadline answered 503 and cancelled this job: its processors stopped between rows.
                    self.metrics.jobCancelled()
                    throw MagpieError.processingFailed(reason: .cancelled)
                }
                self.metrics.phase(.process, ContinuousClock.now - processStart)
                let choice = options.outputFormat(
                    accept: accept, source: sourceImage.format, hasAlpha: !processed.pixels.isOpaque,
                    isAnimated: processed.isAnimated)
                var encoding = options.encodingOptions(for: choice)
                if options.quality == nil { encoding.quality = Self.defaultQuality(choice.format) }
                // libavif's default effort takes seconds per megapixel; 8 is what image servers use for on-line work.
                if choice.format == .avif { encoding.speed = 8 }
                let encodeStart = ContinuousClock.now
                let data: Data
                do {
                    data = try ImageCoderRegistry.shared.encode(
                        processed, as: choice.format, options: encoding, isCancelled: context.isCancelled)
                } catch MagpieError.processingFailed(reason: .cancelled) {
                    // The encoders stop between rows too: a 49 MP PNG takes longer to write than to make.
                    self.metrics.jobCancelled()
                    throw MagpieError.processingFailed(reason: .cancelled)
                }
                self.metrics.phase(.encode, ContinuousClock.now - encodeStart)
                return (data, (choice.format, choice.variesOnAccept))
            }
        }
        guard let (encoded, format) = produced else {
            throw ServerFailure(status: 503, message: "processing took longer than \(limit)")
        }
        let image = ServedImage(
            data: encoded, format: format.0, lastModified: await sourceLastModified(source), variesOnAccept: format.1)
        memory.store(image, forKey: key, admission: .fresh)
        // Written after the answer, not before: the memory layer serves the next requests meanwhile, and a write
        // that evicts or meets a slow disk never delays this one. Shutdown waits for these writes.
        let results = self.results, logger = self.logger, validators = image.validators
        resultWrites.start {
            do {
                try await results.storeData(encoded, forKey: key, expiration: nil, validators: validators)
            } catch {
                // A full or failing disk costs a later request a job, never an answer.
                logger.warning("result not stored", metadata: ["error": "\(error)"])
            }
        }
        return ProducedImage(image: image, layer: retrieved.cacheType == .none ? "none" : "original")
    }

    /// Decoding shrinks a source to what the first resize needs (JPEG DCT scaling, WebP scaled decoding): a 2K
    /// photo thumbnailed to 512 decodes a quarter of the pixels. Limits are the server's (sources, results, working
    /// memory); `color:srgb` converts.
    func decodingOptions(for options: ServeOptions) -> ImageDecodingOptions {
        var decoding = ImageDecodingOptions.default
        decoding.limits.maxPixelsPerFrame = configuration.maximumPixels
        decoding.limits.maxFrameCount = configuration.maximumFrames
        decoding.limits.maxResultDimension = configuration.maximumResultDimension
        decoding.limits.maxWorkingBytes = configuration.maximumWorkingMemory
        decoding.onlyFirstFrame = options.firstFrameOnly
        if options.color == .srgb { decoding.colorSpace = .sRGB }
        let first = (options.processor as? ChainedImageProcessor)?.processors.first ?? options.processor
        if let resize = first as? ResizingImageProcessor {
            decoding.targetSize = resize.referenceSize
            decoding.contentMode = resize.mode == .aspectFit ? .aspectFit : .aspectFill
        }
        return decoding
    }

    /// imgproxy's default (80) for the lossy formats; AVIF looks as good at a lower number.
    static func defaultQuality(_ format: ImageFormat) -> Int {
        format == .avif ? 60 : 80
    }

    /// The source's `Last-Modified`: the origin's header kept with its bytes, or a local file's modification time.
    func sourceLastModified(_ source: Source) async -> String? {
        switch source {
        case .network(let resource):
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

