#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an encoder writes besides pixels, decided once from the image and ``ImageEncodingOptions/metadata``: the
/// ICC profile unless stripping (built from CICP or gAMA/cHRM when the image has no ICC bytes; nothing for sRGB),
/// and EXIF (orientation reset to 1: pixels are upright) and XMP only when keeping.
struct EncodedMetadata {
    let icc: Data?
    let exif: Data?
    let xmp: Data?

    init(_ image: Image, _ options: ImageEncodingOptions) {
        // iccForEmbedding already refuses gray and CMYK profiles (encoders write RGB; the registry converts those).
        icc = options.metadata == .strip ? nil : image.colorProfile.flatMap(ColorConverter.iccForEmbedding)
        exif = options.metadata == .keep ? image.metadata.exif.map(EXIFData.resettingOrientation) : nil
        xmp = options.metadata == .keep ? image.metadata.xmp : nil
    }
}
