import Magpie

extension ImgproxyOptions {
    /// `imgproxy;` then every option that differs from its default, in a fixed order, with all its arguments written
    /// out (`rt:fill;w:300;h:200;g:sm`): the same for every spelling of the same options, different for any options that
    /// make a different image. `watermarkName` and `detector` name the server's watermark image and face detector when
    /// they take part.
    func canonicalText(watermarkName: String? = nil, detector: String? = nil) -> String {
        func number(_ value: Double) -> String { DecimalText.format(value) }
        func flag(_ value: Bool) -> String { value ? "1" : "0" }
        var parts: [String] = []
        if resizingType != .fit { parts.append("rt:\(resizingType.rawValue)") }
        if width != 0 { parts.append("w:\(width)") }
        if height != 0 { parts.append("h:\(height)") }
        if minWidth != 0 { parts.append("mw:\(minWidth)") }
        if minHeight != 0 { parts.append("mh:\(minHeight)") }
        if zoomX != 1 || zoomY != 1 { parts.append("z:\(number(zoomX)):\(number(zoomY))") }
        if dpr != 1 { parts.append("dpr:\(number(dpr))") }
        if enlarge { parts.append("el:1") }
        if extend.enabled { parts.append("ex:1:\(extend.gravity.specText)") }
        if extendAspectRatio.enabled { parts.append("exar:1:\(extendAspectRatio.gravity.specText)") }
        if gravity != .center { parts.append("g:\(gravity.specText)") }
        if crop.width != 0 || crop.height != 0 {
            parts.append("c:\(number(crop.width)):\(number(crop.height)):\((crop.gravity ?? gravity).specText)")
        }
        if let trim {
            parts.append("t:\(number(trim.threshold)):\(trim.color.map { String($0.hex.prefix(6)) } ?? ""):"
                + "\(flag(trim.equalHorizontal)):\(flag(trim.equalVertical))")
        }
        if !padding.isZero { parts.append("pd:\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)") }
        if rotation != 0 { parts.append("rot:\(rotation)") }
        if flipHorizontal || flipVertical { parts.append("fl:\(flag(flipHorizontal)):\(flag(flipVertical))") }
        if let background {
            parts.append("bg:\(background.hex.prefix(6))")
            if backgroundAlpha < 1 { parts.append("bga:\(number(backgroundAlpha))") }
        }
        if blur != 0 { parts.append("bl:\(number(blur))") }
        if sharpen != 0 { parts.append("sh:\(number(sharpen))") }
        if pixelate > 1 { parts.append("pix:\(pixelate)") }
        if brightness != 0 || contrast != 1 || saturation != 1 {
            parts.append("a:\(brightness):\(number(contrast)):\(number(saturation))")
        }
        if watermark.opacity > 0, let watermarkName {
            let position = watermark.position?.rawValue ?? "re"
            parts.append("wm:\(number(watermark.opacity)):\(position):\(number(watermark.offsetX)):\(number(watermark.offsetY)):"
                + "\(watermark.scale.map(number) ?? ""):\(watermarkName)")
        }
        if let detector, usesSmartGravity { parts.append("detector:\(detector)") }
        return (["imgproxy"] + parts).joined(separator: ";")
    }

    /// Whether `sm` decides a crop.
    var usesSmartGravity: Bool {
        gravity.kind == .smart || crop.gravity?.kind == .smart
    }

    /// The smallest decode that gives the same result, for decoders that shrink while decoding (JPEG's DCT scaling):
    /// the target box times DPR and zoom, filled or fitted as the resizing type does. Nil when the result needs the
    /// source's own pixels: a crop or a trim (given in source pixels), or a minimum width or height.
    var decodingTarget: (size: PixelSize, mode: ImageDecodingOptions.ContentMode)? {
        guard crop.width == 0, crop.height == 0, trim == nil, minWidth == 0, minHeight == 0, width > 0 || height > 0 else {
            return nil
        }
        // A side not asked for is 1: filling the box then follows the other side alone.
        var box = PixelSize(
            width: width > 0 ? Int((Double(width) * dpr * zoomX).rounded(.up)) : 1,
            height: height > 0 ? Int((Double(height) * dpr * zoomY).rounded(.up)) : 1)
        if rotation % 180 != 0 { box = PixelSize(width: box.height, height: box.width) }
        let fits = resizingType == .fit && width > 0 && height > 0
        return (box, fits ? .aspectFit : .aspectFill)
    }
}
