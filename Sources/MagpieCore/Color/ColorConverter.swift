import CImageCodecs
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Converts pixels to sRGB with lcms2 (perceptual intent, alpha untouched), from an ICC profile, CICP code points
/// or PNG gAMA/cHRM. Transforms are built once per (profile, pixel layout) and shared by every thread.
public enum ColorConverter {
    /// `image` with every frame converted to sRGB and ``Image/colorProfile`` set to nil.
    ///
    /// Unchanged (apart from the profile) when the profile already means sRGB. Left as stored, profile kept, when
    /// the colours cannot be converted: HDR transfer functions (PQ, HLG: no tone mapping in Magpie), CICP code
    /// points lcms2 has no model for, a CMYK profile on pixels the decoder already turned into RGB, or an ICC profile
    /// lcms2 cannot read (the file's own fault; the pixels are still the best guess).
    ///
    /// - Parameter image: A decoded image.
    /// - Returns: The converted image.
    public static func convertedToSRGB(_ image: Image) -> Image {
        var copy = image
        convertToSRGB(&copy)
        return copy
    }

    /// Converts `image` to sRGB in place, as ``convertedToSRGB(_:)`` does; pixels the image alone references are
    /// converted where they are, without a copy.
    ///
    /// - Parameters:
    ///   - image: A decoded image.
    ///   - exactLCMS: Evaluates every pixel with lcms2 itself instead of the matrix-shaper fast path (for tests).
    static func convertToSRGB(_ image: inout Image, exactLCMS: Bool = false) {
        guard let profile = image.colorProfile else { return }
        if profile.isSRGB {
            image.colorProfile = nil
            return
        }
        var layout: mg_color_layout
        switch profile.colorModel {
        case .rgb: layout = MG_COLOR_RGBA8
        case .gray: layout = MG_COLOR_GRAY_IN_RGBA8
        case .cmyk: return
        }
        if exactLCMS { layout = mg_color_layout(rawValue: layout.rawValue | MG_COLOR_EXACT_LCMS.rawValue) }
        guard let transform = transform(for: profile, layout: layout) else { return }
        image.updatePixels { pixels in
            let count = pixels.width * pixels.height
            pixels.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                // Large frames in two halves at once: the conversion then adds about half as much to a decode
                // on an idle machine, and costs nothing more on a busy one.
                let parts = count >= 1 << 20 ? 2 : 1
                let each = (count + parts - 1) / parts
                let address = UInt(bitPattern: base)
                DispatchQueue.concurrentPerform(iterations: parts) { part in
                    let start = part * each
                    guard start < count, let pointer = UnsafeMutablePointer<UInt8>(bitPattern: address) else { return }
                    let pixelsHere = min(each, count - start)
                    mg_color_transform_apply(transform.pointer, pointer + start * 4, pointer + start * 4, pixelsHere)
                }
            }
        }
        image.colorProfile = nil
    }

    /// Converts CMYK samples (4 bytes per pixel) through their embedded CMYK ICC profile into opaque sRGB RGBA8.
    ///
    /// - Parameters:
    ///   - cmyk: `pixelCount * 4` bytes of C, M, Y, K.
    ///   - inverted: True for Adobe's inverted storage (255 means no ink), as in JPEGs with an APP14 marker.
    ///   - iccProfile: A CMYK ICC profile.
    ///   - output: Room for `pixelCount * 4` bytes.
    ///   - pixelCount: Pixels to convert.
    /// - Returns: False when the profile is unreadable or not CMYK; the caller then uses its formula.
    static func convertCMYK(
        _ cmyk: UnsafePointer<UInt8>, inverted: Bool, iccProfile: Data, into output: UnsafeMutablePointer<UInt8>,
        pixelCount: Int
    ) -> Bool {
        let profile = ColorProfile(iccData: iccProfile)
        guard profile.colorModel == .cmyk,
            let transform = transform(for: profile, layout: inverted ? MG_COLOR_CMYK8_INVERTED : MG_COLOR_CMYK8)
        else { return false }
        mg_color_transform_apply(transform.pointer, cmyk, output, pixelCount)
        return true
    }

    /// The ICC bytes of `profile` when it is a CMYK profile lcms2 can use, else nil (decoders then use their formula).
    static func usableCMYKProfile(_ profile: ColorProfile) -> Data? {
        guard profile.colorModel == .cmyk, let icc = profile.iccData,
            transform(for: profile, layout: MG_COLOR_CMYK8) != nil
        else { return nil }
        return icc
    }

    /// Turns a bitmap holding CMYK samples (4 bytes per pixel) into opaque sRGB in place through `iccProfile`, or by
    /// the corpus formula (`R = C*K/255` for inverted storage, `(255-C)*(255-K)/255` otherwise) if lcms2 fails.
    static func convertCMYKInPlace(_ pixels: inout PixelBuffer, inverted: Bool, iccProfile: Data) {
        let count = pixels.width * pixels.height
        pixels.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            if convertCMYK(base, inverted: inverted, iccProfile: iccProfile, into: base, pixelCount: count) { return }
            for i in 0..<count {
                let p = base + i * 4
                let (c, m, y, k) = (UInt32(p[0]), UInt32(p[1]), UInt32(p[2]), UInt32(p[3]))
                func channel(_ v: UInt32) -> UInt8 {
                    inverted ? UInt8((v * k + 127) / 255) : UInt8(((255 - v) * (255 - k) + 127) / 255)
                }
                (p[0], p[1], p[2], p[3]) = (channel(c), channel(m), channel(y), 255)
            }
        }
    }

    /// The ICC profile to embed for `profile` when encoding: its own ICC bytes, or one built from its CICP code points
    /// or gAMA/cHRM; nil when the colours are sRGB (nothing to embed) or cannot be described.
    static func iccForEmbedding(_ profile: ColorProfile) -> Data? {
        // Encoders write RGB samples: a gray or CMYK profile cannot describe them.
        guard profile.colorModel == .rgb else { return nil }
        if let icc = profile.iccData { return icc }
        guard !profile.isSRGB, var space = rgbSpace(of: profile) else { return nil }
        var buffer = mg_buffer()
        var error = mg_error()
        guard mg_color_profile_from_space(&space, &buffer, &error) == Int32(MG_OK.rawValue) else { return nil }
        return CodecBridge.data(adopting: buffer)
    }

    /// Runs `body` with a transform from `profile` to sRGB for RGBA8 pixels, for a decoder that converts rows as it
    /// decodes them (JPEG); nil when there is nothing to convert or ``convertToSRGB(_:exactLCMS:)`` would leave the
    /// pixels alone (sRGB already, not RGB, unreadable). The transform lives until `body` returns.
    static func withDecodingTransform<R>(
        for profile: ColorProfile?, _ body: (UnsafeMutableRawPointer?) throws -> R
    ) rethrows -> R {
        guard let profile, profile.colorModel == .rgb, !profile.isSRGB,
            let transform = transform(for: profile, layout: MG_COLOR_RGBA8)
        else { return try body(nil) }
        return try withExtendedLifetime(transform) { try body(transform.pointer) }
    }

    // MARK: - Transforms

    private final class Transform: Sendable {
        nonisolated(unsafe) let pointer: UnsafeMutableRawPointer
        init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
        deinit { mg_color_transform_free(pointer) }
    }

    /// A transform's identity: the SHA-256 of the profile bytes (or of the synthetic space's numbers) and the pixel
    /// layout. Plain integers, so the cache holds no copies of profiles (LeakSanitizer also cannot follow Swift's
    /// tagged references inside dictionary keys, and reported them as leaks).
    private struct TransformKey: Hashable {
        var digest: SIMD4<UInt64>
        var layout: UInt32
    }

    /// Built transforms, and the keys of profiles lcms2 refused; emptied when it passes 64 entries.
    private static let transforms = Mutex<(built: [TransformKey: Transform], refused: Set<TransformKey>)>(([:], []))

    private static func transform(for profile: ColorProfile, layout: mg_color_layout) -> Transform? {
        let space = profile.iccData == nil ? rgbSpace(of: profile) : nil
        let digest: [UInt8]
        if let icc = profile.iccData {
            digest = SHA256Hash.digest(icc)
        } else if let space {
            let numbers = [space.white_x, space.white_y, space.red_x, space.red_y, space.green_x, space.green_y,
                           space.blue_x, space.blue_y, Double(space.transfer), space.gamma]
            digest = numbers.withUnsafeBytes { SHA256Hash.digest($0) }
        } else {
            return nil
        }
        let words = digest.withUnsafeBytes { raw in (0..<4).map { raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self) } }
        let key = TransformKey(digest: SIMD4(words[0], words[1], words[2], words[3]), layout: layout.rawValue)
        let cached = transforms.withLock { ($0.built[key], $0.refused.contains(key)) }
        if let built = cached.0 { return built }
        if cached.1 { return nil }
        // Built outside the lock: creating a transform takes milliseconds; a rare duplicate is harmless.
        var error = mg_error()
        let pointer: UnsafeMutableRawPointer? =
            if let icc = profile.iccData {
                CodecBridge.withBytes(of: icc) { bytes, count in
                    mg_color_transform_create(bytes, count, nil, Int32(layout.rawValue), &error)
                }
            } else {
                withUnsafePointer(to: space!) { mg_color_transform_create(nil, 0, $0, Int32(layout.rawValue), &error) }
            }
        let built = pointer.map(Transform.init)
        transforms.withLock { cache in
            if cache.built.count + cache.refused.count >= 64 { cache = ([:], []) }
            if let built { cache.built[key] = built } else { cache.refused.insert(key) }
        }
        return built
    }

    /// The RGB space CICP code points or PNG gAMA/cHRM describe; nil for what lcms2 cannot model (HDR transfers,
    /// unknown code points).
    static func rgbSpace(of profile: ColorProfile) -> mg_rgb_space? {
        if let cicp = profile.cicp {
            let primaries: [Double]
            switch cicp.colorPrimaries {
            case 1, 2: primaries = [0.3127, 0.3290, 0.640, 0.330, 0.300, 0.600, 0.150, 0.060]
            case 4: primaries = [0.310, 0.316, 0.67, 0.33, 0.21, 0.71, 0.14, 0.08]
            case 5: primaries = [0.3127, 0.3290, 0.64, 0.33, 0.29, 0.60, 0.15, 0.06]
            case 6, 7: primaries = [0.3127, 0.3290, 0.630, 0.340, 0.310, 0.595, 0.155, 0.070]
            case 9: primaries = [0.3127, 0.3290, 0.708, 0.292, 0.170, 0.797, 0.131, 0.046]
            case 11: primaries = [0.314, 0.351, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060]
            case 12: primaries = [0.3127, 0.3290, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060]
            case 22: primaries = [0.3127, 0.3290, 0.630, 0.340, 0.295, 0.605, 0.155, 0.077]
            default: return nil
            }
            let transfer: mg_transfer
            var gamma = 1.0
            switch cicp.transferCharacteristics {
            case 2, 13: transfer = MG_TRANSFER_SRGB
            case 1, 6, 14, 15: transfer = MG_TRANSFER_BT709
            case 4: (transfer, gamma) = (MG_TRANSFER_GAMMA, 2.2)
            case 5: (transfer, gamma) = (MG_TRANSFER_GAMMA, 2.8)
            case 8: transfer = MG_TRANSFER_LINEAR
            default: return nil
            }
            return space(primaries, transfer, gamma)
        }
        if let fileGamma = profile.gamma, fileGamma > 0 {
            let c = profile.chromaticities
            let primaries =
                c.map { [$0.whiteX, $0.whiteY, $0.redX, $0.redY, $0.greenX, $0.greenY, $0.blueX, $0.blueY] }
                ?? [0.3127, 0.3290, 0.640, 0.330, 0.300, 0.600, 0.150, 0.060]
            return space(primaries, MG_TRANSFER_GAMMA, 1 / fileGamma)
        }
        return nil
    }

    /// Nil unless every chromaticity is a real point (finite, y > 0, x + y ≤ 1) and the gamma is finite and positive:
    /// lcms2 divides by y, and a profile of infinities is no colour space.
    private static func space(_ p: [Double], _ transfer: mg_transfer, _ gamma: Double) -> mg_rgb_space? {
        guard gamma.isFinite, gamma > 0 else { return nil }
        for i in stride(from: 0, to: 8, by: 2) {
            let (x, y) = (p[i], p[i + 1])
            guard x.isFinite, y.isFinite, x >= 0, y > 0, x + y <= 1 else { return nil }
        }
        return mg_rgb_space(
            white_x: p[0], white_y: p[1], red_x: p[2], red_y: p[3], green_x: p[4], green_y: p[5], blue_x: p[6],
            blue_y: p[7], transfer: Int32(transfer.rawValue), gamma: gamma)
    }
}
