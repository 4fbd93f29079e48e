#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a processor is given: bytes still to decode, or an image.
public enum ImageProcessItem: Sendable {
    /// A decoded image.
    case image(Image)
    /// Encoded bytes (downloaded or read from a cache).
    case data(Data)
}

/// Turns data or an image into a (processed) image.
///
/// A processor's ``identifier`` is part of the cache key of everything it produces, so two
/// processors that produce different pixels must have different identifiers. Built-in
/// identifiers are their text form (`resize:256x256:fit`), which ``ImageProcessorSpec/parse(_:)``
/// reads back. Chain processors with `|>`; the chain's identifier joins theirs with `|`.
///
/// Processors run on whatever thread the pipeline uses (a job of
/// a manager's ``BoundedExecutor``), so they must be thread-safe.
public protocol ImageProcessor: Sendable {
    /// Names this processor and its parameters; `""` only for ``DefaultImageProcessor``.
    /// Must not contain `|`, which separates the processors of a chain.
    var identifier: String { get }

    /// The processed image; nil when this processor cannot handle `item` (the pipeline then
    /// fails with ``MagpieError/ProcessingFailureReason/processorFailed(identifier:)``).
    ///
    /// Processors given ``ImageProcessItem/data(_:)`` usually decode it with ``DefaultImageProcessor`` first
    /// (with ``ImageProcessingContext/decodingOptions``) and then process the image.
    ///
    /// - Parameters:
    ///   - item: Encoded bytes or a decoded image.
    ///   - context: Decoding settings (scale, limits) and whether the work is still wanted.
    /// - Returns: The processed image, or nil when `item` cannot be handled.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` for bytes that do not decode,
    ///   ``MagpieError/processingFailed(reason:)`` for parameters or images the processor cannot work with.
    func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image?

    /// The size a decoder may shrink the source to while decoding (JPEG's DCT scaling, SVG's rendering) without
    /// changing this processor's result, and how that size is measured; nil when the result needs the source whole.
    /// By default nil; a resize answers its own size, a chain its first processor's. A server decodes its sources
    /// with it (`ImageDecodingOptions.targetSize`).
    var decodingTarget: (size: PixelSize, mode: ImageDecodingOptions.ContentMode)? { get }
}

extension ImageProcessor {
    /// Nil: the source is decoded whole.
    public var decodingTarget: (size: PixelSize, mode: ImageDecodingOptions.ContentMode)? { nil }

    /// A processor running `self` first and `another` on its result (what `|>` does).
    ///
    /// - Parameter another: The processor that runs second.
    /// - Returns: A ``ChainedImageProcessor``; default processors are dropped from it.
    public func append(another: any ImageProcessor) -> any ImageProcessor {
        ChainedImageProcessor(self, another)
    }

    /// Decodes `.data` with the default processor, then hands the image to `body`.
    /// Built-ins that only work on pixels use it for the data case.
    package func processImage(
        _ item: ImageProcessItem, context: ImageProcessingContext, _ body: (Image) throws -> Image?
    ) throws -> Image? {
        switch item {
        case .image(let image): try body(image)
        case .data:
            try DefaultImageProcessor.default.process(item: item, context: context).flatMap(body)
        }
    }

    /// Refuses to make an image of `size` with `frameCount` frames, needing `scratchBytes` of other buffers while it is
    /// made, when that would break the retrieval's limits (``ImageDecodingLimits``): a side over
    /// ``ImageDecodingLimits/maxResultDimension``, a frame over ``ImageDecodingLimits/maxPixelsPerFrame``, all frames
    /// over ``ImageDecodingLimits/maxTotalBytes``, or frames and scratch together over
    /// ``ImageDecodingLimits/maxWorkingBytes``. So a text form such as `resize:1x49000000` from an untrusted caller
    /// fails with a typed error before any memory is taken.
    func checkOutput(_ size: PixelSize, frameCount: Int, scratchBytes: Int = 0, context: ImageProcessingContext) throws {
        let limits = context.limits
        func refuse(_ limit: MagpieError.ProcessingLimit) -> MagpieError {
            .processingFailed(reason: .outputTooLarge(processor: identifier, size: size, frames: frameCount, limit: limit))
        }
        guard size.width <= limits.maxResultDimension, size.height <= limits.maxResultDimension else {
            throw refuse(.dimension(limits.maxResultDimension))
        }
        // Both sides are now at most maxResultDimension, but that limit is the caller's to set: keep every product checked.
        let (pixels, pixelOverflow) = size.width.multipliedReportingOverflow(by: size.height)
        guard !pixelOverflow, pixels <= limits.maxPixelsPerFrame else { throw refuse(.pixelsPerFrame(limits.maxPixelsPerFrame)) }
        let (frameBytes, byteOverflow) = pixels.multipliedReportingOverflow(by: 4)
        let (totalBytes, totalOverflow) = frameBytes.multipliedReportingOverflow(by: max(frameCount, 1))
        guard !byteOverflow, !totalOverflow, totalBytes <= limits.maxTotalBytes else {
            throw refuse(.totalBytes(limits.maxTotalBytes))
        }
        let (working, workingOverflow) = totalBytes.addingReportingOverflow(max(0, scratchBytes))
        guard !workingOverflow, working <= limits.maxWorkingBytes else {
            throw refuse(.workingBytes(needed: workingOverflow ? .max : working, limit: limits.maxWorkingBytes))
        }
    }
}

infix operator |>: AdditionPrecedence

/// `left` then `right`, as one processor; its identifier is `left.identifier|right.identifier`
/// (a ``DefaultImageProcessor`` on either side adds nothing).
///
/// - Parameters:
///   - left: The processor that runs first.
///   - right: The processor that runs on `left`'s result.
/// - Returns: A ``ChainedImageProcessor`` of both.
public func |> (left: any ImageProcessor, right: any ImageProcessor) -> any ImageProcessor {
    left.append(another: right)
}

/// Two processors run one after the other. Default processors vanish from chains, so
/// `DefaultImageProcessor() |> p` has `p`'s identifier and caches like `p`.
public struct ChainedImageProcessor: ImageProcessor {
    /// The processors in the order they run, flattened (never a nested chain, never a default one).
    public let processors: [any ImageProcessor]

    /// The first processor's: what runs later works on its output, not on the source.
    public var decodingTarget: (size: PixelSize, mode: ImageDecodingOptions.ContentMode)? { processors.first?.decodingTarget }

    /// `first` then `second`; chains are flattened and default processors dropped.
    ///
    /// - Parameters:
    ///   - first: The processor (or chain) that runs first.
    ///   - second: The processor (or chain) that runs next.
    public init(_ first: any ImageProcessor, _ second: any ImageProcessor) {
        func flat(_ p: any ImageProcessor) -> [any ImageProcessor] {
            if let chain = p as? ChainedImageProcessor { return chain.processors }
            return p.identifier.isEmpty ? [] : [p]
        }
        processors = flat(first) + flat(second)
    }

    /// The identifiers of ``processors`` joined by `|`; `""` when the chain is empty (only default processors).
    public var identifier: String { processors.map(\.identifier).joined(separator: "|") }

    /// Runs every processor in turn; the first gets `item` (data is decoded once, by it), the
    /// rest get its image. An empty chain decodes like ``DefaultImageProcessor``.
    ///
    /// - Returns: The last processor's image, or nil as soon as one processor returns nil.
    /// - Throws: The first error a processor throws; ``MagpieError/ProcessingFailureReason/cancelled`` when
    ///   the context is cancelled between two processors.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard let first = processors.first else {
            return try DefaultImageProcessor.default.process(item: item, context: context)
        }
        guard var image = try first.process(item: item, context: context) else { return nil }
        for processor in processors.dropFirst() {
            try context.checkCancellation()
            guard let next = try processor.process(item: .image(image), context: context) else { return nil }
            image = next
        }
        return image
    }
}

/// Decodes data into an image with ``ImageCoderRegistry/shared`` and
/// ``ImageProcessingContext/decodingOptions``; passes images through unchanged.
public struct DefaultImageProcessor: ImageProcessor {
    /// The shared instance.
    public static let `default` = DefaultImageProcessor()

    /// Creates the processor.
    public init() {}

    /// Empty: the default processor's output is the original image.
    public var identifier: String { "" }

    /// The decoded image (with `context.decodingOptions`), or the image given.
    ///
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` when the data does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        switch item {
        case .image(let image): image
        case .data(let data): try ImageCoderRegistry.shared.decode(data, options: context.decodingOptions)
        }
    }
}
