#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The pipeline's processing and serializing stages on their own, for a caller that keeps its results itself: an
/// image server that caches encoded bytes by its own key runs them as a retrieval does (the same executor, counters,
/// errors and cancellation), rather than beside the pipeline.
extension ImageManager {
    /// Runs `processor` on `item` on ``processingExecutor``: the stage a retrieval runs after its source is loaded.
    ///
    /// Cancelling the calling task sets the context's `isCancelled`, which processors check between passes.
    /// - Parameters:
    ///   - item: Bytes to decode or an image to process.
    ///   - processor: What to do; ``DefaultImageProcessor`` decodes.
    ///   - decodingOptions: How `item`'s bytes are decoded (limits, downsampling, colour).
    ///   - priority: The executor's priority for it; nil for the caller's.
    /// - Returns: The processed image.
    /// - Throws: ``MagpieError/processingFailed(reason:)`` (``MagpieError/ProcessingFailureReason/cancelled`` when the
    ///   task was cancelled, ``MagpieError/ProcessingFailureReason/processorFailed(identifier:)`` when the processor
    ///   gave nothing), or the decoder's ``MagpieError/decodingFailed(reason:)``.
    public func processImage(
        _ item: ImageProcessItem, with processor: any ImageProcessor, decodingOptions: ImageDecodingOptions = .default,
        priority: TaskPriority? = nil
    ) async throws -> Image {
        do {
            return try await runProcessor(
                processor, on: item, decodingOptions: decodingOptions, priority: priority,
                isProcessed: !processor.identifier.isEmpty)
        } catch is CancellationError {
            throw MagpieError.processingFailed(reason: .cancelled)
        }
    }

    /// Turns `image` into bytes with `serializer` on ``processingExecutor`` (encoding is CPU work, like processing):
    /// the stage a retrieval runs before its data-cache write.
    ///
    /// - Parameters:
    ///   - image: The image to write.
    ///   - serializer: The format and settings; its cancellable ``CacheSerializer/data(with:original:isCancelled:)`` is
    ///     called, so cancelling the calling task stops an encoder between rows.
    ///   - original: The bytes `image` was decoded from, for a serializer that may keep them.
    /// - Returns: The encoded bytes.
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with ``MagpieError/ProcessingFailureReason/cancelled`` when
    ///   the task was cancelled, or the serializer's error.
    public func serializeImage(_ image: Image, with serializer: any CacheSerializer, original: Data? = nil) async throws -> Data {
        do {
            return try await processingExecutor.run { isCancelled in
                try serializer.data(with: image, original: original, isCancelled: isCancelled)
            }
        } catch is CancellationError {
            throw MagpieError.processingFailed(reason: .cancelled)
        }
    }

    /// The processing stage's one implementation: the retrieval's and ``processImage(_:with:decodingOptions:priority:)``'s.
    func runProcessor(
        _ processor: any ImageProcessor, on item: ImageProcessItem, decodingOptions: ImageDecodingOptions,
        priority: TaskPriority?, isProcessed: Bool
    ) async throws -> Image {
        let counters = self.counters
        return try await processingExecutor.run(priority: priority) { isCancelled in
            if case .data = item { counters.decodes.add(1, ordering: .relaxed) }
            if isProcessed { counters.processingRuns.add(1, ordering: .relaxed) }
            let context = ImageProcessingContext(decodingOptions: decodingOptions, isCancelled: isCancelled)
            guard let image = try processor.process(item: item, context: context) else {
                throw MagpieError.processingFailed(reason: .processorFailed(identifier: processor.identifier))
            }
            return image
        }
    }
}
