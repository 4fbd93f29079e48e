/// What a container stores beside its pixels, read by the per-format walkers (JPEG segments, PNG chunks, WebP
/// chunks, GIF extensions) without decoding pixels.
struct EmbeddedMetadata {
    var colorProfile: ColorProfile?
    var metadata = ImageMetadata.none

    /// `image` carrying this colour profile and metadata.
    func applied(to image: Image) -> Image {
        var copy = image
        copy.colorProfile = colorProfile
        copy.metadata = metadata
        return copy
    }

    /// XMP packets are stored after this keyword in JPEG APP1 and PNG iTXt alike.
    static let xmpJPEGNamespace = Array("http://ns.adobe.com/xap/1.0/\0".utf8)

    /// The `Exif\0\0` prefix of JPEG APP1 (and of WebP/HEIF payloads written by some tools).
    static let exifPrefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
}
