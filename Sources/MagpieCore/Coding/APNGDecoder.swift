#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes the animation of an APNG (acTL/fcTL/fdAT chunks) per the APNG specification.
///
/// libpng only sees the still (IDAT) image, so each frame is rebuilt as a small PNG
/// (the file's IHDR with the frame's size, PLTE, tRNS, and the frame data as IDAT),
/// decoded by libpng, and composited onto the canvas with the frame's blend and
/// dispose operations. Any structural problem in the animation (sequence numbers,
/// frame bounds, missing data, undecodable frame) makes `decode` return nil, so the
/// caller falls back to the still image, as the specification asks.
struct APNGDecoder {
    private let chunks: [PNGChunk]
    private let complete: Bool

    init(data: Data) {
        (chunks, complete) = PNGChunks.read(data)
    }

    private struct FrameControl {
        var width: Int, height: Int, x: Int, y: Int
        var delay: Duration
        var dispose: UInt8, blend: UInt8
        var data = Data()
    }

    private struct Animation {
        var header: Data
        var frames: [FrameControl]
        var plays: Int
        var ancillary: [PNGChunk]  // PLTE and tRNS, needed to decode every frame
    }

    /// The composited animation (or only its first frame with `onlyFirstFrame`), or nil when
    /// the file is not a valid APNG. Throws only for limits and memory, never for a broken animation.
    func decode(options: ImageDecodingOptions) throws -> Image? {
        guard let animation = parse() else { return nil }
        guard let canvasWidth = Int(exactly: PNGChunks.readUInt32(animation.header, animation.header.startIndex)),
            let canvasHeight = Int(exactly: PNGChunks.readUInt32(animation.header, animation.header.startIndex + 4))
        else { return nil }
        let limits = options.limits
        let frameCount = options.onlyFirstFrame ? 1 : animation.frames.count
        if frameCount > limits.maxFrameCount {
            throw MagpieError.decodingFailed(reason: .tooLarge(.png, message:
                "APNG has \(frameCount) frames to decode, limit is \(limits.maxFrameCount)"))
        }
        // Checked arithmetic: IHDR values come straight from the file (up to 2^32 - 1 each).
        let (canvasPixels, pixelsOverflow) = canvasWidth.multipliedReportingOverflow(by: canvasHeight)
        let (allBytes, bytesOverflow) = canvasPixels.multipliedReportingOverflow(by: 4 * frameCount)
        if pixelsOverflow || bytesOverflow || canvasPixels > limits.maxPixelsPerFrame || allBytes > limits.maxTotalBytes {
            throw MagpieError.decodingFailed(reason: .tooLarge(.png, message:
                "APNG canvas \(canvasWidth)x\(canvasHeight) with \(frameCount) frames exceeds the limits"))
        }

        var canvas = try PixelBuffer(width: canvasWidth, height: canvasHeight)
        var frames: [ImageFrame] = []
        for (index, control) in animation.frames.prefix(frameCount).enumerated() {
            let framePixels: PixelBuffer
            do {
                framePixels = try PNGCoder.decodeStill(frameFile(control, animation), options: options)
            } catch let error as MagpieError {
                if case .decodingFailed(.tooLarge) = error { throw error }
                if case .decodingFailed(.outOfMemory) = error { throw error }
                return nil
            }
            let previous = control.dispose == 2 ? canvas : nil
            // Before the first frame the canvas is transparent, so OVER equals SOURCE.
            canvas.draw(framePixels, atX: control.x, y: control.y, blendOver: control.blend == 1 && index > 0)
            frames.append(ImageFrame(pixels: canvas, duration: control.delay))
            switch control.dispose {
            case 1: canvas.clear(x: control.x, y: control.y, width: control.width, height: control.height)
            case 2:
                // Disposing the first frame to "previous" means to the transparent canvas.
                if index == 0 {
                    canvas.clear(x: control.x, y: control.y, width: control.width, height: control.height)
                } else if let previous {
                    canvas = previous
                }
            default: break
            }
        }
        return try Image(frames: frames, loopCount: animation.plays, format: .png, scale: options.scale)
    }

    private func parse() -> Animation? {
        guard let ihdr = chunks.first, ihdr.type == "IHDR", ihdr.data.count == 13 else { return nil }
        var sawIDAT = false
        var actl: PNGChunk?
        var ancillary: [PNGChunk] = []
        var frames: [FrameControl] = []
        var expectedSequence: UInt32 = 0
        var idatBelongsToFrame = false
        for chunk in chunks {
            switch chunk.type {
            case "acTL":
                // Callers only come here when an acTL precedes IDAT; a second one anywhere is a violation, and
                // every violation falls back to the still image.
                guard actl == nil else { return nil }
                actl = chunk
            case "PLTE", "tRNS": if !sawIDAT { ancillary.append(chunk) }
            case "fcTL":
                guard chunk.data.count == 26, let control = frameControl(chunk.data),
                    PNGChunks.readUInt32(chunk.data, chunk.data.startIndex) == expectedSequence
                else { return nil }
                expectedSequence += 1
                if !sawIDAT { idatBelongsToFrame = true }
                frames.append(control)
            case "IDAT":
                sawIDAT = true
                if idatBelongsToFrame && frames.count == 1 { frames[0].data.append(chunk.data) }
            case "fdAT":
                guard chunk.data.count >= 4, !frames.isEmpty,
                    PNGChunks.readUInt32(chunk.data, chunk.data.startIndex) == expectedSequence
                else { return nil }
                expectedSequence += 1
                if idatBelongsToFrame && frames.count == 1 { return nil }  // frame 0 uses IDAT only
                frames[frames.count - 1].data.append(chunk.data.dropFirst(4))
            default: break
            }
        }
        guard let actl, actl.data.count == 8, complete else { return nil }
        let declared = Int(PNGChunks.readUInt32(actl.data, actl.data.startIndex))
        let plays = Int(PNGChunks.readUInt32(actl.data, actl.data.startIndex + 4))
        let canvasWidth = Int(PNGChunks.readUInt32(ihdr.data, ihdr.data.startIndex))
        let canvasHeight = Int(PNGChunks.readUInt32(ihdr.data, ihdr.data.startIndex + 4))
        guard declared >= 1, declared == frames.count else { return nil }
        for (index, frame) in frames.enumerated() {
            guard !frame.data.isEmpty, frame.x + frame.width <= canvasWidth, frame.y + frame.height <= canvasHeight
            else { return nil }
            if index == 0 && idatBelongsToFrame
                && (frame.width != canvasWidth || frame.height != canvasHeight || frame.x != 0 || frame.y != 0)
            { return nil }
        }
        return Animation(header: ihdr.data, frames: frames, plays: plays, ancillary: ancillary)
    }

    private func frameControl(_ d: Data) -> FrameControl? {
        let s = d.startIndex
        let width = Int(PNGChunks.readUInt32(d, s + 4)), height = Int(PNGChunks.readUInt32(d, s + 8))
        let x = Int(PNGChunks.readUInt32(d, s + 12)), y = Int(PNGChunks.readUInt32(d, s + 16))
        let numerator = Int64(PNGChunks.readUInt16(d, s + 20))
        var denominator = Int64(PNGChunks.readUInt16(d, s + 22))
        if denominator == 0 { denominator = 100 }  // the specification's rule for a zero denominator
        let dispose = d[s + 24], blend = d[s + 25]
        guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF, x <= 0x7FFF_FFFF,
            y <= 0x7FFF_FFFF, dispose <= 2, blend <= 1
        else { return nil }
        return FrameControl(
            width: width, height: height, x: x, y: y,
            delay: .nanoseconds(numerator * 1_000_000_000 / denominator), dispose: dispose, blend: blend)
    }

    private func frameFile(_ control: FrameControl, _ animation: Animation) -> Data {
        var file = PNGChunks.signature
        var header = Data()
        PNGChunks.appendUInt32(UInt32(control.width), to: &header)
        PNGChunks.appendUInt32(UInt32(control.height), to: &header)
        header.append(animation.header.dropFirst(8))
        PNGChunks.write("IHDR", header, to: &file)
        for chunk in animation.ancillary { PNGChunks.write(chunk.type, chunk.data, to: &file) }
        PNGChunks.write("IDAT", control.data, to: &file)
        PNGChunks.write("IEND", Data(), to: &file)
        return file
    }
}

extension PixelBuffer {
    /// Draws `source` with its top-left corner at (`x`, `y`), clipped to this buffer:
    /// replacing pixels, or compositing with straight-alpha "over" when `blendOver`.
    mutating func draw(_ source: PixelBuffer, atX x: Int, y: Int, blendOver: Bool) {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(width, x + source.width), y1 = min(height, y + source.height)
        guard x0 < x1, y0 < y1 else { return }
        let canvasWidth = width
        source.withUnsafeBytes { srcRaw in
            withUnsafeMutableBytes { dstRaw in
                let src = srcRaw.bindMemory(to: UInt8.self), dst = dstRaw.bindMemory(to: UInt8.self)
                for row in y0..<y1 {
                    let srcRow = ((row - y) * source.width + (x0 - x)) * 4
                    let dstRow = (row * canvasWidth + x0) * 4
                    let count = (x1 - x0) * 4
                    if !blendOver {
                        for i in 0..<count { dst[dstRow + i] = src[srcRow + i] }
                        continue
                    }
                    var i = 0
                    while i < count {
                        let sa = UInt32(src[srcRow + i + 3])
                        if sa == 255 {
                            for c in 0..<4 { dst[dstRow + i + c] = src[srcRow + i + c] }
                        } else if sa != 0 {
                            let da = UInt32(dst[dstRow + i + 3])
                            let keep = da * (255 - sa)  // destination weight, scaled by 255
                            let outA255 = sa * 255 + keep
                            for c in 0..<3 {
                                let value = UInt32(src[srcRow + i + c]) * sa * 255 + UInt32(dst[dstRow + i + c]) * keep
                                dst[dstRow + i + c] = UInt8((value + outA255 / 2) / outA255)
                            }
                            dst[dstRow + i + 3] = UInt8((outA255 + 127) / 255)
                        }
                        i += 4
                    }
                }
            }
        }
    }

    /// Makes a rectangle fully transparent (clipped to the buffer).
    mutating func clear(x: Int, y: Int, width w: Int, height h: Int) {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(width, x + w), y1 = min(height, y + h)
        guard x0 < x1, y0 < y1 else { return }
        let canvasWidth = width
        withUnsafeMutableBytes { raw in
            let p = raw.bindMemory(to: UInt8.self)
            for row in y0..<y1 {
                let start = (row * canvasWidth + x0) * 4
                for i in start..<(start + (x1 - x0) * 4) { p[i] = 0 }
            }
        }
    }
}
