import Magpie

/// imgproxy's processing options, as an imgproxy URL sets them: one state that the option segments update in URL
/// order (a later option overrides an earlier one, an empty argument keeps what was set), run as one fixed pipeline
/// whatever the order they came in (``ImgproxyProcessor``). Field defaults are imgproxy's.
public struct ImgproxyOptions: Sendable, Hashable {
    /// How `width` and `height` are met.
    public enum ResizingType: String, Sendable, Hashable, CaseIterable {
        /// Fit inside, keeping the aspect ratio.
        case fit
        /// Cover, keeping the aspect ratio, then crop the overflow (by the gravity).
        case fill
        /// As ``fill``, but a source smaller than the target is cropped to the target's aspect ratio instead of enlarged.
        case fillDown = "fill-down"
        /// Exactly `width` × `height`, the aspect ratio changed.
        case force
        /// ``fill`` when source and target are oriented alike (both landscape or both portrait), else ``fit``.
        case auto
    }

    /// Canvas growth (imgproxy's `extend` and `extend_aspect_ratio`).
    public struct Extension: Sendable, Hashable {
        /// Whether it applies.
        public var enabled = false
        /// Where the image sits on the canvas.
        public var gravity = Gravity.center

        /// An extension; off at the centre by default.
        public init(enabled: Bool = false, gravity: Gravity = .center) {
            self.enabled = enabled
            self.gravity = gravity
        }
    }

    /// A crop in source pixels before resizing (imgproxy's `crop`).
    public struct Crop: Sendable, Hashable {
        /// 0 for the whole width, 1 or more for pixels, below 1 for a fraction of the width.
        public var width: Double = 0
        /// As ``width``, along the height.
        public var height: Double = 0
        /// Where the crop sits; nil uses the main gravity.
        public var gravity: Gravity?

        /// A crop; none by default.
        public init(width: Double = 0, height: Double = 0, gravity: Gravity? = nil) {
            self.width = width
            self.height = height
            self.gravity = gravity
        }
    }

    /// Border trimming (imgproxy's `trim`).
    public struct Trim: Sendable, Hashable {
        /// Colour distance (0...255) still counted as background.
        public var threshold: Double
        /// The background colour; nil takes the top-left pixel's.
        public var color: RGBAColor?
        /// Cut the smaller of the left and right margins from both.
        public var equalHorizontal = false
        /// Cut the smaller of the top and bottom margins from both.
        public var equalVertical = false

        /// Trimming within `threshold` of `color`.
        public init(threshold: Double, color: RGBAColor? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) {
            self.threshold = threshold
            self.color = color
            self.equalHorizontal = equalHorizontal
            self.equalVertical = equalVertical
        }
    }

    /// A watermark drawn last (imgproxy's `watermark`).
    public struct Watermark: Sendable, Hashable {
        /// 0...1; 0 draws nothing.
        public var opacity: Double = 0
        /// A gravity, or nil for `re` (copies over the whole image).
        public var position: Gravity.Anchor? = .center
        /// Offset (or, replicated, the gap) along x: pixels when 1 or more, else a fraction.
        public var offsetX: Double = 0
        /// Offset (or gap) along y.
        public var offsetY: Double = 0
        /// Fraction of the image's size to fit the watermark into; nil keeps its own size.
        public var scale: Double?

        /// A watermark; none (opacity 0) by default.
        public init(opacity: Double = 0, position: Gravity.Anchor? = .center, offsetX: Double = 0, offsetY: Double = 0, scale: Double? = nil) {
            self.opacity = opacity
            self.position = position
            self.offsetX = offsetX
            self.offsetY = offsetY
            self.scale = scale
        }
    }

    /// `resizing_type`/`rt` (also `resize`'s first argument): how width and height are met. Default ``ResizingType/fit``.
    public var resizingType = ResizingType.fit
    /// `width`/`w`: the target width in pixels; 0 follows the height and the aspect ratio.
    public var width = 0
    /// `height`/`h`: the target height; 0 follows the width.
    public var height = 0
    /// `min-width`/`mw`: the result is at least this wide (enlarging if need be).
    public var minWidth = 0
    /// `min-height`/`mh`: the result is at least this tall.
    public var minHeight = 0
    /// `zoom`/`z`: multiplies the result's width (not offsets or padding).
    public var zoomX = 1.0
    /// `zoom`/`z`'s second value: multiplies the height.
    public var zoomY = 1.0
    /// `dpr`: multiplies sizes, pixel offsets and padding; lowered where it would enlarge without `enlarge`.
    public var dpr = 1.0
    /// `enlarge`/`el`: whether a source smaller than the target may be enlarged.
    public var enlarge = false
    /// `extend`/`ex`: grow the canvas to the target size.
    public var extend = Extension()
    /// `extend_aspect_ratio`/`exar`: grow the canvas to the target's aspect ratio.
    public var extendAspectRatio = Extension()
    /// `gravity`/`g`: where crops sit (the result crop of `fill`, and `crop` without its own).
    public var gravity = Gravity.center
    /// `crop`/`c`: a crop in source pixels before resizing.
    public var crop = Crop()
    /// `trim`/`t`: cut a uniform border first; nil for none.
    public var trim: Trim?
    /// `padding`/`pd`: space added around the result, times the DPR.
    public var padding = EdgeInsets.zero
    /// `rotate`/`rot`: degrees clockwise, a multiple of 90 (0...270 once read).
    public var rotation = 0
    /// `flip`/`fl`'s first value: mirror left and right.
    public var flipHorizontal = false
    /// `flip`/`fl`'s second value: mirror top and bottom.
    public var flipVertical = false
    /// `background`/`bg`: flatten onto this colour; nil leaves alpha to the output format.
    public var background: RGBAColor?
    /// imgproxy Pro's `background_alpha`/`bga`: the background's opacity, 0...1; below 1 the flattened canvas stays
    /// translucent (an output format with alpha keeps it; JPEG flattens onto the background colour).
    public var backgroundAlpha = 1.0
    /// `blur`/`bl`: Gaussian standard deviation in pixels; 0 for none.
    public var blur = 0.0
    /// `sharpen`/`sh`: unsharp-mask standard deviation; 0 for none.
    public var sharpen = 0.0
    /// `pixelate`/`pix`: block size in pixels; 1 or less for none.
    public var pixelate = 0
    /// imgproxy Pro's `brightness`: −255...255 added to every channel.
    public var brightness = 0
    /// imgproxy Pro's `contrast`: 1 unchanged.
    public var contrast = 1.0
    /// imgproxy Pro's `saturation`: 1 unchanged.
    public var saturation = 1.0
    /// `watermark`/`wm`: the server's watermark image over the result.
    public var watermark = Watermark()

    /// The defaults: imgproxy's, an option-less URL.
    public init() {}

    /// Whether any option moved away from its default (an imgproxy pipeline then runs).
    public var isDefault: Bool {
        var effective = self
        if background == nil { effective.backgroundAlpha = 1 }  // an alpha without a background changes nothing
        return effective == ImgproxyOptions()
    }
}
