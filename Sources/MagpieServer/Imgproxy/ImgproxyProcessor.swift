import Magpie

/// imgproxy's processing pipeline as one processor: whatever order the options came in, it runs trim, rotation and
/// flips, the crop (source pixels), one resize by imgproxy's scale rules, the crop to the result size (the gravity;
/// `sm` finds the interesting part), blur, sharpen, pixelate and the colour adjustments, extend, extend to the aspect
/// ratio, padding, the background and the watermark. (imgproxy rotates after resizing and maps the crop back through the
/// rotation; rotating first gives the same geometry.) Its ``identifier`` is the options' canonical text, so URLs that
/// spell the same options differently share results.
public struct ImgproxyProcessor: ImageProcessor {
    /// The options.
    public let options: ImgproxyOptions

    /// The options' (``ImgproxyOptions/decodingTarget``): imgproxy's one resize, when nothing before it needs the
    /// source whole.
    public var decodingTarget: (size: PixelSize, mode: ImageDecodingOptions.ContentMode)? { options.decodingTarget }
    /// The server's watermark image and its name, drawn when the options ask for one; nil when none is configured.
    public let watermark: (image: Image, name: String)?
    /// What finds faces or objects for `sm` before attention is used; nil for attention alone.
    public let detector: (any FocalPointDetecting)?

    /// A processor running `options`.
    public init(options: ImgproxyOptions, watermark: (image: Image, name: String)? = nil, detector: (any FocalPointDetecting)? = nil) {
        self.options = options
        self.watermark = watermark
        self.detector = detector
    }

    /// `imgproxy;` and the non-default options in a fixed order, each with every argument written out.
    public var identifier: String {
        options.canonicalText(
            watermarkName: options.watermark.opacity > 0 ? watermark?.name : nil, detector: options.usesSmartGravity ? detector?.identifier : nil)
    }

    /// The processed image.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        try processImage(item, context: context) { image in try run(image, context: context) }
    }

    private func run(_ source: Image, context: ImageProcessingContext) throws -> Image {
        let o = options
        var image = source
        func apply(_ processor: any ImageProcessor) throws {
            try context.checkCancellation()
            if let next = try processor.process(item: .image(image), context: context) { image = next }
        }
        if let trim = o.trim {
            try apply(TrimmingImageProcessor(
                threshold: trim.threshold, color: trim.color, equalHorizontal: trim.equalHorizontal, equalVertical: trim.equalVertical))
        }
        if o.rotation != 0 { try apply(RotationImageProcessor(degrees: o.rotation)) }
        switch (o.flipHorizontal, o.flipVertical) {
        case (true, true): try apply(FlipImageProcessor(.both))
        case (true, false): try apply(FlipImageProcessor(.horizontal))
        case (false, true): try apply(FlipImageProcessor(.vertical))
        case (false, false): break
        }

        // The crop, in source pixels.
        let cropSize = PixelSize(
            width: Self.cropSide(image.width, o.crop.width), height: Self.cropSide(image.height, o.crop.height))
        if cropSize != image.pixelSize {
            try apply(GravityCropProcessor(size: cropSize, gravity: o.crop.gravity ?? o.gravity, offsetScale: 1, detector: detector))
        }

        // One resize, by imgproxy's rules.
        let plan = ImgproxyScalePlan(options: o, input: image.pixelSize)
        if plan.scaled != image.pixelSize {
            try apply(ResizingImageProcessor(referenceSize: plan.scaled, mode: .none))
        }
        let result = PixelSize(
            width: plan.resultCrop.width > 0 ? min(plan.resultCrop.width, image.width) : image.width,
            height: plan.resultCrop.height > 0 ? min(plan.resultCrop.height, image.height) : image.height)
        if result != image.pixelSize {
            try apply(GravityCropProcessor(size: result, gravity: o.gravity, offsetScale: plan.dpr, detector: detector))
        }

        if o.blur > 0 { try apply(BlurImageProcessor(blurRadius: o.blur)) }
        if o.sharpen > 0 { try apply(SharpenImageProcessor(sigma: o.sharpen)) }
        if o.pixelate > 1 { try apply(PixelateImageProcessor(size: o.pixelate)) }
        if o.brightness != 0 || o.contrast != 1 || o.saturation != 1 {
            try apply(ColorControlsProcessor(brightness: Double(o.brightness) / 255, contrast: o.contrast, saturation: o.saturation, inputEV: 0))
        }

        if o.extend.enabled {
            try apply(ExtendingImageProcessor(size: plan.target, gravity: o.extend.gravity, offsetScale: plan.dpr))
        }
        if o.extendAspectRatio.enabled, plan.target.width > 0, plan.target.height > 0 {
            let ratio = Double(plan.target.width) / Double(plan.target.height)
            let current = Double(image.width) / Double(image.height)
            var canvas = image.pixelSize
            if ratio < current {
                canvas.height = ImgproxyScalePlan.scale(image.width, 1 / ratio)
            } else if ratio > current {
                canvas.width = ImgproxyScalePlan.scale(image.height, ratio)
            }
            if canvas != image.pixelSize {
                try apply(ExtendingImageProcessor(size: canvas, gravity: o.extendAspectRatio.gravity, offsetScale: plan.dpr))
            }
        }
        if !o.padding.isZero {
            func side(_ value: Int) -> Int { Gravity.roundEven(Double(value) * plan.dpr) }
            try apply(PaddingImageProcessor(insets: EdgeInsets(
                top: side(o.padding.top), right: side(o.padding.right), bottom: side(o.padding.bottom), left: side(o.padding.left))))
        }
        if var background = o.background {
            background.alpha = UInt8((o.backgroundAlpha * 255).rounded())
            try apply(FlatteningImageProcessor(background: background))
        }
        if o.watermark.opacity > 0, let watermark {
            let placement: WatermarkImageProcessor.Placement = o.watermark.position.map {
                .gravity(Gravity(.anchor($0), offsetX: o.watermark.offsetX, offsetY: o.watermark.offsetY))
            } ?? .replicate(gapX: o.watermark.offsetX, gapY: o.watermark.offsetY)
            try apply(WatermarkImageProcessor(
                watermark: watermark.image, named: watermark.name, opacity: o.watermark.opacity, placement: placement,
                scale: o.watermark.scale, offsetScale: plan.dpr))
        }
        return image
    }

    /// A crop side: 0 for the whole side, 1 or more for that many pixels (at most the side), below 1 for a fraction.
    static func cropSide(_ side: Int, _ value: Double) -> Int {
        if value == 0 { return side }
        if value >= 1 { return min(side, Int(value)) }
        return min(side, max(1, Int((Double(side) * value).rounded())))
    }
}
