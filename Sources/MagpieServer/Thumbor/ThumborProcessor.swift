import Magpie

/// thumbor's transformation as one processor, in thumbor's order: trim, `no_upscale`, the manual crop, the target
/// size (`orig` and 0 resolved from the source), then either `fit-in` (optionally adaptive or full) or the automatic
/// crop around the focal point (alignment, or `smart`: a detector's regions, else attention) and the resize, the
/// flips, and the post-transform filters in URL order. Sizes follow thumbor's arithmetic (Python's rounding half to
/// even, its truncations), so the same URL gives the same size. Its ``identifier`` is the options' canonical text.
public struct ThumborProcessor: ImageProcessor {
    /// The options.
    public let options: ThumborOptions
    /// What finds faces or objects for `smart` before attention; nil for attention alone.
    public let detector: (any FocalPointDetecting)?

    /// A processor running `options`.
    public init(options: ThumborOptions, detector: (any FocalPointDetecting)? = nil) {
        self.options = options
        self.detector = detector
    }

    /// The options' canonical text, with the detector when `smart` uses it.
    public var identifier: String {
        options.canonicalText + (options.smart ? detector.map { ";detector:\($0.identifier)" } ?? "" : "")
    }

    /// The processed image.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        try processImage(item, context: context) { image in
            var run = Run(image: image, context: context, options: options, detector: detector)
            try run.transform()
            try run.applyFilters()
            return run.image
        }
    }

    /// One image going through the steps; `requested` is thumbor's `request.width`/`height`, which `fit-in` rewrites
    /// and `fill` and `upscale` read.
    private struct Run {
        var image: Image
        let context: ImageProcessingContext
        let options: ThumborOptions
        let detector: (any FocalPointDetecting)?
        var requested = (width: 0, height: 0)

        init(image: Image, context: ImageProcessingContext, options: ThumborOptions, detector: (any FocalPointDetecting)?) {
            self.image = image
            self.context = context
            self.options = options
            self.detector = detector
        }

        mutating func apply(_ processor: any ImageProcessor) throws {
            try context.checkCancellation()
            if let next = try processor.process(item: .image(image), context: context) { image = next }
        }

        /// Keeps `width` × `height` from (`left`, `top`).
        mutating func crop(left: Int, top: Int, width: Int, height: Int) throws {
            let size = PixelSize(width: width, height: height)
            guard size != image.pixelSize, width > 0, height > 0 else { return }
            try apply(GravityCropProcessor(size: size, gravity: Gravity(.anchor(.northWest), offsetX: Double(left), offsetY: Double(top))))
        }

        mutating func resize(_ width: Int, _ height: Int) throws {
            let size = PixelSize(width: max(width, 1), height: max(height, 1))
            if size != image.pixelSize { try apply(ResizingImageProcessor(referenceSize: size, mode: .none)) }
        }

        mutating func transform() throws {
            if let reference = options.trimReference {
                let corner = reference == .topLeft ? image.pixels[0, 0] : image.pixels[image.width - 1, image.height - 1]
                try apply(TrimmingImageProcessor(threshold: Double(options.trimTolerance), color: corner))
            }
            func side(_ side: ThumborOptions.Side, _ original: Int) -> Int {
                switch side {
                case .pixels(let value): value
                case .original: original
                }
            }
            // `no_upscale` runs after loading, on the source's size; `orig` is read after the manual crop.
            var (width, height) = (options.width, options.height)
            if options.has("no_upscale") {
                if case .pixels(let value) = width { width = .pixels(min(value, image.width)) }
                if case .pixels(let value) = height { height = .pixels(min(value, image.height)) }
            }
            if let box = options.crop {
                let left = min(max(box.left, 0), image.width), right = min(max(box.right, 0), image.width)
                let top = min(max(box.top, 0), image.height), bottom = min(max(box.bottom, 0), image.height)
                if left < right, top < bottom { try crop(left: left, top: top, width: right - left, height: bottom - top) }
            }
            requested = (side(width, image.width), side(height, image.height))
            let source = (width: Double(image.width), height: Double(image.height))
            var target = (width: source.width, height: source.height)
            if requested.width != 0 || requested.height != 0 {
                target.width = requested.width != 0 ? Double(requested.width)
                    : (Double(requested.height) * source.width / source.height).rounded(.toNearestOrEven)
                target.height = requested.height != 0 ? Double(requested.height)
                    : (Double(requested.width) * source.height / source.width).rounded(.toNearestOrEven)
            }
            switch options.fitMode {
            case .crop:
                if !options.has("stretch") { try autoCrop(target: target) }
                try resize(Int(target.width), Int(target.height))
            case .fitIn, .adaptiveFitIn, .fullFitIn, .adaptiveFullFitIn:
                try fitIn(target: target)
            }
            switch (options.flipHorizontal, options.flipVertical) {
            case (true, true): try apply(FlipImageProcessor(.both))
            case (true, false): try apply(FlipImageProcessor(.horizontal))
            case (false, true): try apply(FlipImageProcessor(.vertical))
            case (false, false): break
            }
        }

        /// thumbor's `auto_crop`: the largest window of the target's aspect ratio around the focal point.
        mutating func autoCrop(target: (width: Double, height: Double)) throws {
            let source = (width: Double(image.width), height: Double(image.height))
            let targetWidth = target.width == 0 ? 1 : target.width, targetHeight = target.height == 0 ? 1 : target.height
            func twoPlaces(_ value: Double) -> Double { (value * 100).rounded(.toNearestOrEven) / 100 }
            if twoPlaces(source.width / source.height) == twoPlaces(targetWidth / targetHeight) { return }
            let cropWidth: Int, cropHeight: Int
            if target.width / source.width > target.height / source.height {
                cropWidth = image.width
                cropHeight = Int((source.width * target.height / targetWidth).rounded(.toNearestOrEven))
            } else {
                cropWidth = Int((target.width * source.height / targetHeight).rounded(.up))
                cropHeight = image.height
            }
            let focus = try focalPoint(crop: PixelSize(width: cropWidth, height: cropHeight))
            let left = Int(min(max(focus.x - Double(cropWidth) / 2, 0), source.width - Double(cropWidth)).rounded(.toNearestOrEven))
            let top = Int(min(max(focus.y - Double(cropHeight) / 2, 0), source.height - Double(cropHeight)).rounded(.toNearestOrEven))
            try crop(left: left, top: top, width: min(left + cropWidth, image.width) - left, height: min(top + cropHeight, image.height) - top)
        }

        /// The point the crop centres on, in pixels, floored as thumbor's centre of mass is.
        func focalPoint(crop: PixelSize) throws -> (x: Double, y: Double) {
            if options.smart {
                let point = SmartCropping.focusPoint(in: image.pixels, crop: crop, detector: detector)
                return ((point.x * Double(image.width)).rounded(.down), (point.y * Double(image.height)).rounded(.down))
            }
            return ((options.horizontalAlignment * Double(image.width)).rounded(.down),
                    (options.verticalAlignment * Double(image.height)).rounded(.down))
        }

        /// thumbor's `fit_in_resize`.
        mutating func fitIn(target: (width: Double, height: Double)) throws {
            var target = target
            let source = (width: Double(image.width), height: Double(image.height))
            let adaptive = options.fitMode == .adaptiveFitIn || options.fitMode == .adaptiveFullFitIn
            if adaptive, (source.width < source.height && target.width > target.height)
                || (source.width > source.height && target.width < target.height)
            {
                requested = (requested.height, requested.width)
                target = (target.height, target.width)
            }
            let full = options.fitMode == .fullFitIn || options.fitMode == .adaptiveFullFitIn
            if !full, target.width >= source.width, target.height >= source.height { return }
            let sign = full ? -1.0 : 1.0
            let width: Double, height: Double
            if source.width / target.width * sign >= source.height / target.height * sign {
                (width, height) = (target.width, (source.height * target.width / source.width + 1e-5).rounded(.toNearestOrEven))
            } else {
                (width, height) = ((source.width * target.height / source.height + 1e-5).rounded(.toNearestOrEven), target.height)
            }
            requested = (max(requested.width, Int(width)), max(requested.height, Int(height)))
            try resize(Int(width), Int(height))
        }

        /// The post-transform filters, in URL order.
        mutating func applyFilters() throws {
            for filter in options.filters {
                switch filter {
                case .quality, .format, .maxBytes, .stripICC, .stripEXIF, .noUpscale, .stretch: break
                case .blur(let radius, let sigma): try apply(BlurImageProcessor(blurRadius: sigma == 0 ? Double(radius) : sigma))
                case .sharpen(_, let radius, _): if radius > 0 { try apply(SharpenImageProcessor(sigma: radius)) }
                case .brightness(let value):
                    try apply(ColorControlsProcessor(brightness: Double(value) / 100, contrast: 1, saturation: 1, inputEV: 0))
                case .grayscale: try apply(BlackWhiteProcessor())
                case .rotate(let degrees): if degrees != 0 { try apply(RotationImageProcessor(degrees: 360 - degrees)) }
                case .backgroundColor(let color): try apply(FlatteningImageProcessor(background: color))
                case .fill(let color, let fillTransparent):
                    let canvas = PixelSize(width: requested.width != 0 ? requested.width : image.width,
                                           height: requested.height != 0 ? requested.height : image.height)
                    if fillTransparent, let color { try apply(FlatteningImageProcessor(background: color)) }
                    let left = max(0, (canvas.width - image.width) / 2), top = max(0, (canvas.height - image.height) / 2)
                    try apply(ExtendingImageProcessor(
                        size: canvas, gravity: Gravity(.anchor(.northWest), offsetX: Double(left), offsetY: Double(top)),
                        background: color ?? .clear))
                case .roundCorner(let horizontal, _, let color, let transparent):
                    try apply(RoundCornerImageProcessor(cornerRadius: Double(horizontal), backgroundColor: transparent ? nil : color))
                case .upscale:
                    let (width, height) = requested
                    guard width > 0, height > 0, image.width < width, image.height < height else { break }
                    if Double(image.width) / Double(width) >= Double(image.height) / Double(height) {
                        try resize(width, image.height * width / image.width)
                    } else {
                        try resize(image.width * height / image.height, height)
                    }
                case .proportion(let value):
                    let width = Double(image.width) * value, height = Double(image.height) * value
                    if width >= 1, height >= 1 { try resize(Int(width), Int(height)) }
                }
            }
        }
    }
}
