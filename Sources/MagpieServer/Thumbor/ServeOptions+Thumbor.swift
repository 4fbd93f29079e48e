import Magpie

extension ServeOptions {
    /// The options of a thumbor URL: its geometry and pixel filters run as a ``ThumborProcessor``; `quality`,
    /// `format`, `max_bytes` and `strip_icc` become output options. As thumbor writes no EXIF by default
    /// (`PRESERVE_EXIF_INFO` is off), not even the copyright is kept; the colour profile is, as in thumbor.
    public init(thumbor: ThumborOptions) {
        self.init()
        self.thumbor = thumbor
        keepCopyright = false
        for filter in thumbor.filters {
            switch filter {
            case .quality(let value): quality = max(1, value)
            case .format(let fixed): format = fixed.map(RequestedFormat.fixed) ?? .auto
            case .maxBytes(let bytes): maxBytes = bytes
            case .stripICC: color = .srgb
            default: break
            }
        }
    }
}

extension ThumborOptions {
    /// The smallest decode that gives the same size: only for the default crop mode with both sides given in
    /// pixels and no manual crop or trim, where the result is exactly that size whatever the source's. (Elsewhere
    /// thumbor's sizes are computed from the source's, which a shrunken decode would round differently.)
    var decodingTarget: (size: PixelSize, mode: ImageDecodingOptions.ContentMode)? {
        // `focal()` regions are in the source's pixels, and `meta/` reports the source's: both need it whole.
        guard fitMode == .crop, crop == nil, trimReference == nil, !has("no_upscale"), !has("stretch"), focalBoxes.isEmpty, !meta,
            case .pixels(let width) = width, case .pixels(let height) = height, width > 0, height > 0
        else { return nil }
        return (PixelSize(width: width, height: height), .aspectFill)
    }
}
