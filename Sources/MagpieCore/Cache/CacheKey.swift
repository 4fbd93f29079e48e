/// How every cache key is spelled, in one place: the keys of processed variants on disk and of
/// decode variants in memory. A data or memory cache backend stores these strings as they are.
///
/// - stored key: `key` for an original, `key@variant` for a processed variant;
/// - variant: the processor's identifier, plus `#decode(…)` when the decoding options change pixels
///   (a thumbnail made from a downsampled decode is not the one made from a full decode);
/// - memory key: the stored key, plus `#decode(…)` for an image decoded to a target size.
public enum CacheKey {
    /// The variant identifier of a processor's output made from bytes decoded with `decodingVariant`.
    ///
    /// - Parameters:
    ///   - processorIdentifier: The processor's ``ImageProcessor/identifier``; `""` for the original.
    ///   - decodingVariant: ``ImageDecodingOptions/variantIdentifier`` of the decode it started from.
    /// - Returns: `""` for the original (whatever the decode), else the identifier with its decode variant.
    public static func variant(processorIdentifier: String, decodingVariant: String) -> String {
        guard !processorIdentifier.isEmpty, !decodingVariant.isEmpty else { return processorIdentifier }
        return processorIdentifier + "#decode(" + decodingVariant + ")"
    }

    /// The key an entry is stored under in a data cache.
    ///
    /// - Parameters:
    ///   - key: The source's cache key.
    ///   - variant: The variant identifier; `""` for the original.
    /// - Returns: `key@variant`, or `key` for the original.
    public static func stored(_ key: String, variant: String) -> String {
        variant.isEmpty ? key : key + "@" + variant
    }

    /// The key an image is kept under in a memory cache.
    ///
    /// - Parameters:
    ///   - stored: The stored key (``stored(_:variant:)``).
    ///   - decodingVariant: ``ImageDecodingOptions/variantIdentifier`` of the decode that made the image.
    /// - Returns: `stored`, or `stored#decode(…)` for an image decoded to a target size.
    public static func memory(_ stored: String, decodingVariant: String) -> String {
        decodingVariant.isEmpty ? stored : stored + "#decode(" + decodingVariant + ")"
    }
}
