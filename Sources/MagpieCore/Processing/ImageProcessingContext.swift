/// What a processor may know about the retrieval it runs for: how bytes are decoded (scale, limits,
/// first frame only), the limits every image it makes must respect, and whether the work is still wanted.
///
/// Small on purpose: a processor sees neither the network settings nor the caches, so the same
/// processor runs in the pipeline, in `magpie convert` and in a process that links only `MagpieCore`.
public struct ImageProcessingContext: Sendable {
    /// How ``ImageProcessItem/data(_:)`` is decoded (scale, limits, first frame only, target size).
    public var decodingOptions: ImageDecodingOptions
    /// Answers true once nobody waits for the result any more; long processors check it between
    /// frames or passes (``checkCancellation()``). Default: the current task's cancellation.
    public var isCancelled: @Sendable () -> Bool

    /// A context with the given decoding options (default ``ImageDecodingOptions/default``).
    ///
    /// - Parameters:
    ///   - decodingOptions: How bytes are decoded; its ``ImageDecodingOptions/limits`` bound every output.
    ///   - isCancelled: Whether the work is still wanted; default `Task.isCancelled` of the calling task.
    public init(decodingOptions: ImageDecodingOptions = .default, isCancelled: @escaping @Sendable () -> Bool = { Task.isCancelled }) {
        self.decodingOptions = decodingOptions
        self.isCancelled = isCancelled
    }

    /// The context of a call with no options: default decoding and limits.
    public static let `default` = ImageProcessingContext()

    /// The limits every image a processor makes must respect (the decoding limits).
    public var limits: ImageDecodingLimits { decodingOptions.limits }

    /// Throws ``MagpieError/ProcessingFailureReason/cancelled`` once ``isCancelled`` answers true.
    public func checkCancellation() throws {
        if isCancelled() { throw MagpieError.processingFailed(reason: .cancelled) }
    }
}
