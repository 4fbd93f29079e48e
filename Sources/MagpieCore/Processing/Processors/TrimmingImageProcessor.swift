/// Cuts away a uniform border (imgproxy's `trim`, libvips's `find_trim`): pixels whose 3×3 median differs from the
/// background colour by more than ``threshold`` on some channel are content, and the image is cropped to their
/// bounding box. Translucent pixels are first flattened onto magenta (`#FF00FF`), as imgproxy does, so a transparent
/// border is trimmed with ``color`` `ff00ff`. Animations are left as they are (their frames would disagree). Text form:
/// `trim:THRESHOLD[:RRGGBB][:equalh][:equalv]`.
public struct TrimmingImageProcessor: ImageProcessor {
    /// How far (0...255, on any channel) a pixel may be from the background and still count as background.
    public let threshold: Double
    /// The background colour; nil takes the top-left pixel's.
    public let color: RGBAColor?
    /// Cut the same width from the left and the right (the smaller of the two margins).
    public let equalHorizontal: Bool
    /// Cut the same height from the top and the bottom.
    public let equalVertical: Bool

    /// A processor trimming the border that stays within `threshold` of `color`.
    public init(threshold: Double, color: RGBAColor? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) {
        self.threshold = threshold
        self.color = color
        self.equalHorizontal = equalHorizontal
        self.equalVertical = equalVertical
    }

    /// `trim:THRESHOLD`, then the colour and the `equalh`/`equalv` flags when set.
    public var identifier: String {
        var text = "trim:\(DecimalText.format(threshold))"
        if let color { text += ":\(color.hex.prefix(6))" }
        if equalHorizontal { text += ":equalh" }
        if equalVertical { text += ":equalv" }
        return text
    }

    /// The trimmed image; the image itself when nothing is content or the border is empty.
    public func process(item: ImageProcessItem, context: ImageProcessingContext) throws -> Image? {
        guard threshold.isFinite else {
            throw MagpieError.processingFailed(reason: .invalidParameter(processor: identifier, message: "threshold must be a number"))
        }
        return try processImage(item, context: context) { image in
            guard image.frames.count == 1, let box = contentBox(image.pixels) else { return image }
            if box.width == image.width && box.height == image.height { return image }
            return try image.mapFrames { try CroppingImageProcessor.crop($0, x: box.x, y: box.y, width: box.width, height: box.height) }
        }
    }

    /// The bounding box of the content of `pixels`, after the equal-margin rules; nil when every pixel is background.
    func contentBox(_ pixels: PixelBuffer) -> (x: Int, y: Int, width: Int, height: Int)? {
        let width = pixels.width, height = pixels.height
        // Flattened onto magenta, as 3 bytes a pixel.
        var flat = [UInt8](repeating: 0, count: width * height * 3)
        pixels.withUnsafeBytes { raw in
            let src = raw.bindMemory(to: UInt8.self)
            for i in 0..<(width * height) {
                let a = Int(src[i * 4 + 3])
                let magenta = [255, 0, 255]
                for c in 0..<3 {
                    flat[i * 3 + c] = UInt8((Int(src[i * 4 + c]) * a + magenta[c] * (255 - a) + 127) / 255)
                }
            }
        }
        let background = color.map { [Int($0.red), Int($0.green), Int($0.blue)] } ?? [Int(flat[0]), Int(flat[1]), Int(flat[2])]
        var minX = width, minY = height, maxX = -1, maxY = -1
        var window = [Int](repeating: 0, count: 9)
        for y in 0..<height {
            for x in 0..<width {
                var content = false
                for c in 0..<3 where !content {
                    // The 3×3 median (edges repeat): a speck of noise on a border is not content.
                    var n = 0
                    for dy in -1...1 {
                        let yy = min(max(y + dy, 0), height - 1)
                        for dx in -1...1 {
                            let xx = min(max(x + dx, 0), width - 1)
                            window[n] = Int(flat[(yy * width + xx) * 3 + c])
                            n += 1
                        }
                    }
                    window.sort()
                    content = Double(abs(window[4] - background[c])) > threshold
                }
                if content {
                    minX = min(minX, x)
                    maxX = max(maxX, x)
                    minY = min(minY, y)
                    maxY = max(maxY, y)
                }
            }
        }
        guard maxX >= 0 else { return nil }
        var left = minX, right = width - 1 - maxX, top = minY, bottom = height - 1 - maxY
        if equalHorizontal {
            left = min(left, right)
            right = left
        }
        if equalVertical {
            top = min(top, bottom)
            bottom = top
        }
        return (left, top, width - left - right, height - top - bottom)
    }
}
