import Magpie

/// imgproxy's size arithmetic for one input: the scale of the single resize, the device-pixel ratio left after the
/// enlargement guard, the target size and the result crop. Follows imgproxy's own rules step by step: shrink factors
/// per axis, the resizing type, zoom, the guard against enlarging (which also caps the DPR), the minimum width and
/// height (which may enlarge), then the DPR.
struct ImgproxyScalePlan {
    /// The size the image is resized to.
    let scaled: PixelSize
    /// The requested width and height times DPR and zoom (0 where not requested).
    let target: PixelSize
    /// What the resized image is cropped to (0 keeps a side).
    let resultCrop: PixelSize
    /// The DPR actually applied (offsets, padding and extension use it).
    let dpr: Double

    init(options o: ImgproxyOptions, input: PixelSize) {
        let inW = Double(input.width), inH = Double(input.height)
        let dstW = o.width > 0 ? Double(o.width) : inW, dstH = o.height > 0 ? Double(o.height) : inH
        var ws = dstW != inW ? inW / dstW : 1, hs = dstH != inH ? inH / dstH : 1
        var type = o.resizingType
        if ws != 1 || hs != 1 {
            if type == .auto {
                let sameOrientation = (inW - inH >= 0 && dstW - dstH >= 0) || (inW - inH < 0 && dstW - dstH < 0)
                type = sameOrientation ? .fill : .fit
            }
            if o.width == 0 && type != .force {
                ws = hs
            } else if o.height == 0 && type != .force {
                hs = ws
            } else if type == .fit {
                ws = max(ws, hs)
                hs = ws
            } else if type == .fill || type == .fillDown {
                ws = min(ws, hs)
                hs = ws
            }
        }
        ws /= o.zoomX
        hs /= o.zoomY
        var dpr = o.dpr
        if !o.enlarge {
            let least = min(ws, hs)
            if least < 1 {
                ws /= least
                hs /= least
                if !o.extend.enabled { dpr /= least }
            }
            dpr = min(dpr, min(ws, hs))
        }
        if o.minWidth > 0, inW / Double(o.minWidth) < ws {
            hs /= ws / (inW / Double(o.minWidth))
            ws = inW / Double(o.minWidth)
        }
        if o.minHeight > 0, inH / Double(o.minHeight) < hs {
            ws /= hs / (inH / Double(o.minHeight))
            hs = inH / Double(o.minHeight)
        }
        ws /= dpr
        hs /= dpr
        ws = min(ws, inW)
        hs = min(hs, inH)
        self.dpr = dpr
        scaled = PixelSize(width: max(1, Self.scale(input.width, 1 / ws)), height: max(1, Self.scale(input.height, 1 / hs)))
        target = PixelSize(width: Self.scale(o.width, dpr * o.zoomX), height: Self.scale(o.height, dpr * o.zoomY))
        var crop = target
        if o.resizingType == .fillDown && !o.enlarge, target.width > 0, target.height > 0 {
            let dW = Double(target.width) / Double(scaled.width), dH = Double(target.height) / Double(scaled.height)
            if dW > dH && dW > 1 {
                crop = PixelSize(width: scaled.width, height: Self.scale(scaled.width, Double(target.height) / Double(target.width)))
            } else if dH > dW && dH > 1 {
                crop = PixelSize(width: Self.scale(scaled.height, Double(target.width) / Double(target.height)), height: scaled.height)
            }
        }
        resultCrop = crop
    }

    /// `value × factor` rounded half away from zero (Go's `math.Round`); 0 stays 0.
    static func scale(_ value: Int, _ factor: Double) -> Int {
        value == 0 ? 0 : Int((Double(value) * factor).rounded(.toNearestOrAwayFromZero))
    }
}
