import CImageCodecs
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Glue between the C codec wrappers and Swift: limits in, errors and bitmaps out.
enum CodecBridge {
    static func limits(_ options: ImageDecodingOptions) -> mg_limits {
        // In C a zero limit means "none"; a non-positive Swift limit must stay the tightest
        // possible limit instead, as the APNG path (Swift) treats it.
        let l = options.limits
        return mg_limits(
            max_pixels: UInt64(max(1, l.maxPixelsPerFrame)),
            max_total_bytes: UInt64(max(1, l.maxTotalBytes)),
            max_frames: UInt32(clamping: max(1, l.maxFrameCount)))
    }

    /// Turns a failed C call's `mg_error` into the matching decoding reason; `path` names the file a decoder read
    /// from, if it did.
    static func decodingError(_ error: mg_error, format: ImageFormat, path: String? = nil) -> MagpieError {
        let message = message(of: error)
        let reason: MagpieError.DecodingFailureReason
        switch mg_status(UInt32(error.status)) {
        case MG_ERR_IO: reason = .unreadableFile(path: path ?? "the input", message: message)
        case MG_ERR_TRUNCATED: reason = .truncatedData(format, message: message)
        case MG_ERR_TOO_LARGE: reason = .tooLarge(format, message: message)
        case MG_ERR_UNSUPPORTED: reason = .unsupportedFormat(format, detail: message)
        case MG_ERR_NO_MEMORY: reason = .outOfMemory(format, message: message)
        default: reason = .corruptData(format, message: message.isEmpty ? "decoder failed" : message)
        }
        return .decodingFailed(reason: reason)
    }

    static func encodingError(_ error: mg_error, format: ImageFormat) -> MagpieError {
        // The thread's cancellation check stopped it (ImageCoderRegistry.encode(_:as:options:isCancelled:)).
        if mg_status(UInt32(error.status)) == MG_ERR_CANCELLED { return .processingFailed(reason: .cancelled) }
        let text = message(of: error)
        return .encodingFailed(reason: .encoderFailed(format, message: text.isEmpty ? "encoder failed" : text))
    }

    /// Runs `body` with `isCancelled` as this thread's cancellation check for the C encoders (asked between rows),
    /// cleared afterwards whatever `body` does.
    static func withCancellationCheck<T>(_ isCancelled: @escaping @Sendable () -> Bool, _ body: () throws -> T) rethrows -> T {
        let box = Unmanaged.passRetained(CancellationCheck(isCancelled))
        mg_set_cancel_check({ context in
            Unmanaged<CancellationCheck>.fromOpaque(context!).takeUnretainedValue().isCancelled() ? 1 : 0
        }, box.toOpaque())
        defer {
            mg_set_cancel_check(nil, nil)
            box.release()
        }
        return try body()
    }

    static func message(of error: mg_error) -> String {
        withUnsafeBytes(of: error.message) { raw in
            let bytes = raw.prefix(while: { $0 != 0 })
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Adopts a C bitmap's malloc'd pixels without copying.
    static func pixels(adopting bitmap: mg_bitmap) -> PixelBuffer {
        let width = Int(bitmap.width), height = Int(bitmap.height)
        let storage = PixelStorage(adopting: bitmap.pixels, count: width * height * 4)
        return PixelBuffer(width: width, height: height, storage: storage)
    }

    /// Adopts an encoder's malloc'd output as `Data` (freed with it), shrunk to its length first: encoders allocate
    /// for the worst case (libjpeg-turbo's destination is 16 KiB + a quarter of the pixels), and a cache holding the
    /// `Data` must not hold the unused rest of the block.
    static func data(adopting buffer: mg_buffer) -> Data {
        guard let bytes = buffer.bytes else { return Data() }
        let fitted = realloc(bytes, max(1, buffer.length)) ?? UnsafeMutableRawPointer(bytes)
        return Data(bytesNoCopy: fitted, count: buffer.length, deallocator: .free)
    }

    /// Moves what a C decoder read besides pixels into `image`: colour profile (ICC wins; CICP kept beside it),
    /// EXIF/XMP and the source's bit depth and alpha. The buffers are adopted and `meta` is zeroed, so a later
    /// `mg_image_meta_release` frees nothing twice.
    static func attach(_ meta: inout mg_image_meta, to image: inout Image) {
        let icc = data(adopting: meta.icc), exif = data(adopting: meta.exif), xmp = data(adopting: meta.xmp)
        let cicp = meta.has_cicp != 0
            ? CICP(colorPrimaries: meta.cicp_primaries, transferCharacteristics: meta.cicp_transfer,
                   matrixCoefficients: meta.cicp_matrix, fullRange: meta.cicp_full_range != 0)
            : nil
        if !icc.isEmpty || cicp != nil {
            image.colorProfile = ColorProfile(iccData: icc.isEmpty ? nil : icc, cicp: cicp)
        }
        image.metadata = ImageMetadata(exif: exif, xmp: xmp)
        image.sourceInfo = ImageSourceInfo(bitDepth: meta.bit_depth == 0 ? 8 : Int(meta.bit_depth), hasAlpha: meta.has_alpha != 0)
        meta = mg_image_meta()
    }

    /// Runs `body` with a pointer to `data`'s bytes (never nil, even for empty data).
    static func withBytes<R>(of data: Data, _ body: (UnsafePointer<UInt8>, Int) throws -> R) rethrows -> R {
        try data.withUnsafeBytes { raw in
            if let base = raw.baseAddress, raw.count > 0 {
                return try body(base.assumingMemoryBound(to: UInt8.self), raw.count)
            }
            var zero: UInt8 = 0
            return try withUnsafePointer(to: &zero) { try body($0, 0) }
        }
    }
}

/// A Swift closure the C encoders can reach through an opaque pointer.
private final class CancellationCheck {
    let isCancelled: @Sendable () -> Bool

    init(_ isCancelled: @escaping @Sendable () -> Bool) {
        self.isCancelled = isCancelled
    }
}
