#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an encoder writes besides pixels, decided once from the image and ``ImageEncodingOptions/metadata``: the
/// ICC profile unless stripping (built from CICP or gAMA/cHRM when the image has no ICC bytes; nothing for sRGB),
/// EXIF (orientation reset to 1: pixels are upright) and XMP when keeping, and with
/// ``ImageEncodingOptions/keepsCopyright`` the EXIF's copyright and artist alone when not.
struct EncodedMetadata {
    let icc: Data?
    let exif: Data?
    let xmp: Data?

    init(_ image: Image, _ options: ImageEncodingOptions) {
        // iccForEmbedding already refuses gray and CMYK profiles (encoders write RGB; the registry converts those).
        icc = options.metadata == .strip ? nil : image.colorProfile.flatMap(ColorConverter.iccForEmbedding)
        exif = Self.exif(image, options)
        xmp = Self.xmp(image, options)
    }

    /// The EXIF an encoder writes (a bare TIFF structure), nil for none. Every coder asks here, so the rule is one.
    static func exif(_ image: Image, _ options: ImageEncodingOptions) -> Data? {
        guard let payload = image.metadata.exif else { return nil }
        switch options.metadata {
        case .keep: return EXIFData.resettingOrientation(payload)
        case .none where options.keepsCopyright: return EXIFData.keepingOnlyCopyright(payload)
        case .none, .strip: return nil
        }
    }

    /// The XMP packet an encoder writes, nil for none: only when keeping metadata.
    static func xmp(_ image: Image, _ options: ImageEncodingOptions) -> Data? {
        options.metadata == .keep ? image.metadata.xmp : nil
    }
}
