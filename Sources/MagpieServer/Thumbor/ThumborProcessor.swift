import Magpie

/// thumbor's transformation as one processor, in thumbor's order: trim, `no_upscale`, the manual crop, the target
/// size (`orig` and 0 resolved from the source), then either `fit-in` (optionally adaptive or full) or the automatic
/// crop around the focal point (`focal()` regions, else `smart`: a detector's regions or attention, else the
/// alignment) and the resize, the flips, and the post-transform filters in URL order. Sizes follow thumbor's arithmetic
/// (Python's rounding half to even, its truncations), so the same URL gives the same size. Its ``identifier`` is the
/// options' canonical text.
public struct ThumborProcessor: ImageProcessor {
    /// The options.
    public let options: ThumborOptions

    /// The options' (``ThumborOptions/decodingTarget``): the default crop to a size given in pixels.
    public var decodingTarget: (size: PixelSize, mode: ImageDecodingOptions.ContentMode)? { options.decodingTarget }
    /// What finds faces or objects for `smart` before attention; nil for attention alone.
    public let detector: (any FocalPointDetecting)?
    /// The images of the options' `watermark(…)` filters, by URL (the server fetches them first); a watermark whose
    /// image is missing fails the run.
    public let watermarks: [String: Image]

    /// A processor running `options`.
    ///
    /// - Parameters:
    ///   - options: The geometry and filters.
    ///   - detector: What `smart` asks before attention.
    ///   - watermarks: The watermark images by their URL in the filters.
    public init(options: ThumborOptions, detector: (any FocalPointDetecting)? = nil, watermarks: [String: Image] = [:]) {
        self.options = options
        self.detector = detector
        self.watermarks = watermarks
    }

    /// The options' canonical text, with the detector when `smart` uses it.
    public var identifier: String {
        options.canonicalText + (options.smart ? detector.map { ";detector:\($0.identifier)" } ?? "" : "")
    }

    /// The processed image.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        try processImage(item, context: context) { image in try run(image, context: context).image }
    }

    /// The processed image and what the transformation did (for `meta/`).
    func run(_ image: Image, context: ImageProcessingContext) throws -> (image: Image, trace: ThumborTrace) {
        var run = Run(image: image, context: context, processor: self)
        try run.transform()
        try run.applyFilters()
        return (run.image, run.trace)
    }

    /// One image going through the steps; `requested` is thumbor's `request.width`/`height`, which `fit-in` rewrites
    /// and `fill` and `upscale` read.
    private struct Run {
        var image: Image
        let context: ImageProcessingContext
        let options: ThumborOptions
        let processor: ThumborProcessor
        var requested = (width: 0, height: 0)
        var trace = ThumborTrace()
        /// The focal points after the manual crop (thumbor's `adjust_focal_points`): the `focal()` regions inside it,
        /// else the alignment's point.
        var explicitFocus = false

        init(image: Image, context: ImageProcessingContext, processor: ThumborProcessor) {
            self.image = image
            self.context = context
            self.options = processor.options
            self.processor = processor
        }

        mutating func apply(_ processor: any ImageProcessor) throws {
            try context.checkCancellation()
            if let next = try processor.process(item: .image(image), context: context) { image = next }
        }

        /// Keeps `width` × `height` from (`left`, `top`), recorded as thumbor's engine records it.
        mutating func crop(left: Int, top: Int, width: Int, height: Int) throws {
            trace.operations.append(.crop(left: left, top: top, right: left + width, bottom: top + height))
            let size = PixelSize(width: width, height: height)
            guard size != image.pixelSize, width > 0, height > 0 else { return }
            try apply(GravityCropProcessor(size: size, gravity: Gravity(.anchor(.northWest), offsetX: Double(left), offsetY: Double(top))))
        }

        /// Resizes to (the truncated) `width` × `height`; `record` gives what thumbor's JSON engine writes.
        mutating func resize(_ width: ThumborTrace.Number, _ height: ThumborTrace.Number, record: Bool = true) throws {
            if record { trace.operations.append(.resize(width: width, height: height)) }
            let size = PixelSize(width: max(width.value, 1), height: max(height.value, 1))
            if size != image.pixelSize { try apply(ResizingImageProcessor(referenceSize: size, mode: .none)) }
        }

        mutating func resize(_ width: Int, _ height: Int) throws {
            try resize(.int(width), .int(height), record: false)
        }

        mutating func transform() throws {
            if let reference = options.trimReference {
                let corner = reference == .topLeft ? image.pixels[0, 0] : image.pixels[image.width - 1, image.height - 1]
                try apply(TrimmingImageProcessor(threshold: Double(options.trimTolerance), color: corner))
                // thumbor crops to the bounding box whatever it is (its JSON shows the crop); the trimming processor
                // does not say where the box lay, so it is written from the origin, with its size.
                trace.operations.append(.crop(left: 0, top: 0, right: image.width, bottom: image.height))
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
            var cropBox: ThumborOptions.Box?
            if let box = options.crop {
                let left = min(max(box.left, 0), image.width), right = min(max(box.right, 0), image.width)
                let top = min(max(box.top, 0), image.height), bottom = min(max(box.bottom, 0), image.height)
                if left < right, top < bottom {
                    cropBox = ThumborOptions.Box(left: left, top: top, right: right, bottom: bottom)
                    try crop(left: left, top: top, width: right - left, height: bottom - top)
                }
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
            adjustFocalPoints(crop: cropBox)
            switch options.fitMode {
            case .crop:
                if !options.has("stretch") { try autoCrop(target: target) }
                if Int(target.width) != image.width || Int(target.height) != image.height {
                    // thumbor's `resize`: `target or 1`, floats unless 0.
                    try resize(target.width == 0 ? .int(1) : .float(target.width), target.height == 0 ? .int(1) : .float(target.height))
                }
            case .fitIn, .adaptiveFitIn, .fullFitIn, .adaptiveFullFitIn:
                try fitIn(target: target)
            }
            if options.flipHorizontal { trace.operations.append(.flipHorizontally) }
            if options.flipVertical { trace.operations.append(.flipVertically) }
            switch (options.flipHorizontal, options.flipVertical) {
            case (true, true): try apply(FlipImageProcessor(.both))
            case (true, false): try apply(FlipImageProcessor(.horizontal))
            case (false, true): try apply(FlipImageProcessor(.vertical))
            case (false, false): break
            }
        }

        /// thumbor's `adjust_focal_points`: the `focal()` regions as points (centre, weight = area) moved by the manual
        /// crop, those outside it dropped; none left, the alignment's point.
        mutating func adjustFocalPoints(crop: ThumborOptions.Box?) {
            for box in options.focalBoxes {
                let width = box.right - box.left, height = box.bottom - box.top
                var x = box.left + Self.floorDivide(width, 2), y = box.top + Self.floorDivide(height, 2)
                if let crop {
                    guard x >= crop.left, x <= crop.right, y >= crop.top, y <= crop.bottom else { continue }
                    x -= crop.left
                    y -= crop.top
                }
                trace.focalPoints.append(.init(x: x, y: y, weight: .int(width * height), width: width, height: height, origin: "Explicit"))
            }
            explicitFocus = !trace.focalPoints.isEmpty
            if !explicitFocus {
                trace.focalPoints = [.init(
                    x: Int(options.horizontalAlignment * Double(image.width)), y: Int(options.verticalAlignment * Double(image.height)),
                    weight: .float(1), width: 1, height: 1, origin: "alignment")]
            }
        }

        static func floorDivide(_ a: Int, _ b: Int) -> Int { Int((Double(a) / Double(b)).rounded(.down)) }

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

        /// The point the crop centres on, in pixels: the weighted centre of the focal points, floored as thumbor's
        /// centre of mass is; with `smart` and no `focal()` region, what detection or attention finds.
        mutating func focalPoint(crop: PixelSize) throws -> (x: Double, y: Double) {
            if options.smart, !explicitFocus {
                let found = SmartCropping.focus(in: image.pixels, crop: crop, detector: processor.detector)
                let focus = ((found.x * Double(image.width)).rounded(.down), (found.y * Double(image.height)).rounded(.down))
                // Each face as thumbor lists it (its centre, weighted by its area); attention's peak as one point.
                trace.focalPoints = found.regions.isEmpty
                    ? [.init(x: Int(focus.0), y: Int(focus.1), weight: .float(1), width: 1, height: 1, origin: "detection")]
                    : found.regions.map { region in
                        .init(x: Int(region.x + region.width / 2), y: Int(region.y + region.height / 2),
                              weight: .int(Int(region.width) * Int(region.height)), width: Int(region.width), height: Int(region.height),
                              origin: "Face Detection")
                    }
                return focus
            }
            var total = (weight: 0.0, x: 0.0, y: 0.0)
            for point in trace.focalPoints {
                let weight = point.weight.double
                total = (total.weight + weight, total.x + Double(point.x) * weight, total.y + Double(point.y) * weight)
            }
            return ((total.x / total.weight).rounded(.down), (total.y / total.weight).rounded(.down))
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
            let width: ThumborTrace.Number, height: ThumborTrace.Number
            if source.width / target.width * sign >= source.height / target.height * sign {
                (width, height) = (.float(target.width), .int(Int((source.height * target.width / source.width + 1e-5).rounded(.toNearestOrEven))))
            } else {
                (width, height) = (.int(Int((source.width * target.height / source.height + 1e-5).rounded(.toNearestOrEven))), .float(target.height))
            }
            requested = (max(requested.width, width.value), max(requested.height, height.value))
            try resize(width, height)
        }

        /// The post-transform filters, in URL order.
        mutating func applyFilters() throws {
            for filter in options.filters {
                switch filter {
                case .quality, .format, .maxBytes, .stripICC, .stripEXIF, .noUpscale, .stretch, .focal, .extractFocal, .autoJPG, .maxAge:
                    break
                case .blur(let radius, let sigma): try apply(BlurImageProcessor(blurRadius: sigma == 0 ? Double(radius) : sigma))
                case .sharpen(_, let radius, _): if radius > 0 { try apply(SharpenImageProcessor(sigma: radius)) }
                case .brightness(let value):
                    try apply(ColorControlsProcessor(brightness: Double(value) / 100, contrast: 1, saturation: 1, inputEV: 0))
                case .contrast(let value):
                    // thumbor's integer arithmetic: ((N + 100)² // 100) % of the distance from mid-grey.
                    let percent = (value + 100) * (value + 100) / 100
                    try apply(ColorControlsProcessor(brightness: 0, contrast: Double(percent) / 100, saturation: 1, inputEV: 0))
                case .rgb(let red, let green, let blue):
                    try apply(ChannelOffsetProcessor(red: 255 * red / 100, green: 255 * green / 100, blue: 255 * blue / 100))
                case .saturation(let factor):
                    try apply(ColorControlsProcessor(brightness: 0, contrast: 1, saturation: max(0, factor), inputEV: 0))
                case .noise(let amount, let seed): try apply(NoiseProcessor(amount: amount, seed: UInt64(seed)))
                case .equalize: try apply(HistogramEqualizationProcessor())
                case .curve(let all, let red, let green, let blue):
                    try apply(ToneCurveProcessor(all: all, red: red, green: green, blue: blue))
                case .convolution(let kernel, let columns, let normalize):
                    try apply(ConvolutionProcessor(kernel: kernel, columns: columns, normalize: normalize))
                case .watermark(let mark): try watermark(mark)
                case .grayscale: try apply(BlackWhiteProcessor())
                case .rotate(let degrees): if degrees != 0 { try apply(RotationImageProcessor(degrees: 360 - degrees)) }
                case .backgroundColor(let color): try apply(FlatteningImageProcessor(background: color))
                case .fill(let color, let fillTransparent): try fill(color: color, fillTransparent: fillTransparent)
                case .fillAuto(let fillTransparent): try fill(color: Self.meanColor(image.pixels), fillTransparent: fillTransparent)
                case .fillBlur(let fillTransparent): try fillBlur(fillTransparent: fillTransparent)
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

        /// The canvas `fill` draws on: the requested size, or the image's on a side not requested.
        var canvas: PixelSize {
            PixelSize(width: requested.width != 0 ? requested.width : image.width, height: requested.height != 0 ? requested.height : image.height)
        }

        /// Where `fill` puts the image on the canvas: centred, Python's floor division.
        var fillOrigin: (x: Int, y: Int) {
            (Self.floorDivide(canvas.width - image.width, 2), Self.floorDivide(canvas.height - image.height, 2))
        }

        /// `fill(COLOR)`: the image centred on a canvas of the colour (transparent for nil).
        mutating func fill(color: RGBAColor?, fillTransparent: Bool) throws {
            let canvas = self.canvas
            if fillTransparent, let color { try apply(FlatteningImageProcessor(background: color)) }
            let left = max(0, (canvas.width - image.width) / 2), top = max(0, (canvas.height - image.height) / 2)
            try apply(ExtendingImageProcessor(
                size: canvas, gravity: Gravity(.anchor(.northWest), offsetX: Double(left), offsetY: Double(top)),
                background: color ?? .clear))
        }

        /// `fill(blur)`: the canvas is the image blurred (σ 50, thumbor's radius) and stretched to the canvas, the image
        /// drawn over it centred (replacing what is under it, or composited over it with `fill_transparent`).
        mutating func fillBlur(fillTransparent: Bool) throws {
            let canvas = self.canvas, origin = fillOrigin, foreground = image
            try apply(BlurImageProcessor(blurRadius: 50))
            try resize(canvas.width, canvas.height)
            if fillTransparent {
                try apply(WatermarkImageProcessor(
                    watermark: foreground, named: "fill", opacity: 1, placement: .origins([.init(x: origin.x, y: origin.y)])))
            } else {
                let frames = foreground.frames
                var index = 0
                image = image.mapFrames { background in
                    defer { index += 1 }
                    return Self.pasted(frames[min(index, frames.count - 1)].pixels, onto: background, at: origin)
                }
            }
        }

        /// `top` copied onto `base` with its corner at `origin` (alpha included, what falls outside cut): PIL's paste.
        static func pasted(_ top: PixelBuffer, onto base: PixelBuffer, at origin: (x: Int, y: Int)) -> PixelBuffer {
            var output = base
            let left = max(0, origin.x), right = min(base.width, origin.x + top.width)
            let upper = max(0, origin.y), lower = min(base.height, origin.y + top.height)
            guard left < right, upper < lower else { return output }
            top.withUnsafeBytes { source in
                output.withUnsafeMutableBytes { destination in
                    for y in upper..<lower {
                        let from = ((y - origin.y) * top.width + (left - origin.x)) * 4, to = (y * base.width + left) * 4
                        destination.baseAddress!.advanced(by: to).copyMemory(from: source.baseAddress!.advanced(by: from), byteCount: (right - left) * 4)
                    }
                }
            }
            return output
        }

        /// thumbor's `fill(auto)` colour: the mean of each colour channel over every pixel, truncated.
        static func meanColor(_ pixels: PixelBuffer) -> RGBAColor {
            var sums = (0, 0, 0)
            pixels.withUnsafeBytes { bytes in
                var index = 0
                while index < bytes.count {
                    sums = (sums.0 + Int(bytes[index]), sums.1 + Int(bytes[index + 1]), sums.2 + Int(bytes[index + 2]))
                    index += 4
                }
            }
            let area = pixels.width * pixels.height
            return RGBAColor(red: UInt8(sums.0 / area), green: UInt8(sums.1 / area), blue: UInt8(sums.2 / area))
        }

        /// `watermark(…)`: the image fetched for its URL, made more transparent by ALPHA %, fitted into the ratios, and
        /// composited at thumbor's positions.
        mutating func watermark(_ mark: ThumborWatermark) throws {
            guard let loaded = processor.watermarks[mark.url] else {
                throw MagpieError.processingFailed(reason: .invalidParameter(
                    processor: "thumbor watermark", message: "the watermark image \(mark.url) was not loaded"))
            }
            var pixels = loaded.pixels
            if mark.alpha > 0 {
                let delta = 255 * mark.alpha / 100
                pixels.withUnsafeMutableBytes { bytes in
                    for index in stride(from: 3, to: bytes.count, by: 4) { bytes[index] = UInt8(max(0, Int(bytes[index]) - delta)) }
                }
            }
            var markImage = Image(pixels: pixels)
            let size = mark.size(image: image.pixelSize, mark: pixels.pixelSize)
            if size != pixels.pixelSize {
                markImage = try ResizingImageProcessor(referenceSize: size, mode: .none).process(item: .image(markImage), context: context) ?? markImage
            }
            let origins = mark.origins(image: image.pixelSize, mark: markImage.pixelSize).map { WatermarkImageProcessor.Origin(x: $0.x, y: $0.y) }
            try apply(WatermarkImageProcessor(
                watermark: markImage, named: "\(mark.alpha):\(size):\(mark.url)", opacity: 1, placement: .origins(origins)))
        }
    }
}

extension ThumborTrace.Number {
    /// The value as a Double.
    var double: Double {
        switch self {
        case .int(let value): Double(value)
        case .float(let value): value
        }
    }
}
