/// How an image is sized relative to a reference size.
public enum ContentMode: String, Sendable {
    /// Stretch to exactly the reference size, ignoring the aspect ratio.
    case none
    /// Keep the aspect ratio and fit inside the reference size (one side equals it).
    case aspectFit
    /// Keep the aspect ratio and cover the reference size (one side equals it, the other is larger).
    case aspectFill

    /// The word used in text forms: `none`, `fit` or `fill`.
    var specName: String {
        switch self {
        case .none: "none"
        case .aspectFit: "fit"
        case .aspectFill: "fill"
        }
    }

    /// Parses the text-form word (`stretch` is an alias of `none`); nil when unknown.
    init?(specName: String) {
        switch specName.lowercased() {
        case "none", "stretch": self = .none
        case "fit", "aspectfit": self = .aspectFit
        case "fill", "aspectfill": self = .aspectFill
        default: return nil
        }
    }
}

/// Resizes images to a reference size with Lanczos-3, stretching, fitting or filling.
///
/// Enlarging is allowed; ``ContentMode/aspectFill`` does not crop (combine with ``CroppingImageProcessor``
/// for that). Text form: `resize:WxH[:none|fit|fill]`, for example `resize:256x256:fit`.
public struct ResizingImageProcessor: ImageProcessor {
    /// The size the result is measured against, in pixels.
    public let referenceSize: PixelSize
    /// How the aspect ratio is treated.
    public let mode: ContentMode

    /// A processor resizing to `referenceSize` with `mode`.
    ///
    /// - Parameters:
    ///   - referenceSize: The size in pixels the result is measured against; positive (checked when processing).
    ///   - mode: Stretch (``ContentMode/none``, the default), fit or fill.
    public init(referenceSize: PixelSize, mode: ContentMode = .none) {
        self.referenceSize = referenceSize
        self.mode = mode
    }

    /// The text form, `resize:WxH:MODE` with MODE `none`, `fit` or `fill`; ``ImageProcessorSpec/parse(_:)`` reads it
    /// back.
    public var identifier: String { "resize:\(referenceSize):\(mode.specName)" }

    /// ``referenceSize``, fitted for ``ContentMode/aspectFit`` and filled otherwise: a source decoded at least that
    /// large resizes to the same result.
    public var decodingTarget: (size: PixelSize, mode: ImageDecodingOptions.ContentMode)? {
        (referenceSize, mode == .aspectFit ? .aspectFit : .aspectFill)
    }

    /// The resized image, every frame alike.
    ///
    /// - Parameters:
    ///   - item: An image, or bytes that are decoded first with `context.decodingOptions`.
    ///   - context: Decoding settings for data, and the limits the output must respect.
    /// - Returns: The processed image (never nil).
    /// - Throws: ``MagpieError/processingFailed(reason:)`` with
    ///   ``MagpieError/ProcessingFailureReason/invalidParameter(processor:message:)``
    ///   for a non-positive size, ``MagpieError/ProcessingFailureReason/outputTooLarge(processor:size:frames:limit:)``
    ///   for a result or working memory beyond the decoding limits, ``MagpieError/ProcessingFailureReason/cancelled``
    ///   once the context is cancelled; ``MagpieError/decodingFailed(reason:)`` for data that does not decode.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard referenceSize.width > 0, referenceSize.height > 0 else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "size must be positive"))
        }
        return try processImage(item, context: context) { image in
            let size = targetSize(for: image.pixelSize)
            // Every resize, not only enlargements: the output and the resampler's tables and rows are checked against
            // the limits before anything is allocated (a 1×49,000,000 target shrinks one side and grows the other).
            try checkOutput(
                size, frameCount: image.frames.count,
                scratchBytes: ImageResampler.scratchBytes(from: image.pixelSize, to: size), context: context)
            return try image.resized(to: size, isCancelled: context.isCancelled)
        }
    }

    /// The output size for an input of `size`.
    func targetSize(for size: PixelSize) -> PixelSize {
        switch mode {
        case .none: referenceSize
        case .aspectFit: size.fitting(in: referenceSize)
        case .aspectFill: size.filling(referenceSize)
        }
    }
}
