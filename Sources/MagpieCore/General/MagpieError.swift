#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one error type of Magpie. Each case carries a nested reason with the
/// context needed to act on it: which format, which codec message, which limit.
///
/// ``description`` is one line meant for users (it names the URL, status, file or key);
/// switch over the reasons to react programmatically.
public enum MagpieError: Error, Sendable, CustomStringConvertible {
    /// Data could not be turned into an image.
    case decodingFailed(reason: DecodingFailureReason)
    /// An image could not be turned into data.
    case encodingFailed(reason: EncodingFailureReason)
    /// An image could not be built from the given pixels or frames.
    case imageCreationFailed(reason: ImageCreationFailureReason)
    /// An image processor could not process its input.
    case processingFailed(reason: ProcessingFailureReason)
    /// A cache could not read, write or index an entry.
    case cacheFailed(reason: CacheFailureReason)
    /// A download could not be made or finished: bad URL, timeout, cancellation, connection or TLS failure, redirects.
    case requestFailed(reason: RequestFailureReason)
    /// A server answered, but not with a usable image: bad status, not an image, too large, truncated.
    case responseFailed(reason: ResponseFailureReason)
    /// View binding: the image was not set on the target (no source, or a newer request replaced this one).
    case imageSettingFailed(reason: ImageSettingFailureReason)

    /// Why the view-binding layer did not set an image.
    public enum ImageSettingFailureReason: Sendable {
        /// `setImage(with: nil)`: the placeholder is shown and nothing is loaded.
        case emptySource
        /// The result arrived for a request the target no longer shows (it was given another
        /// source since): it was not displayed. Carries what the stale request produced.
        indirect case notCurrentSourceTask(result: RetrieveImageResult?, error: MagpieError?, source: Source)
    }

    /// Why decoding failed.
    public enum DecodingFailureReason: Sendable, Equatable {
        /// The data has no bytes.
        case emptyData
        /// The leading bytes match no known image format; `leadingBytes` shows them in hex.
        case unknownFormat(leadingBytes: String)
        /// A recognised format that no registered coder decodes (or a variant such as 12-bit JPEG).
        case unsupportedFormat(ImageFormat, detail: String?)
        /// The data is malformed; `message` is the codec's own description.
        case corruptData(ImageFormat, message: String)
        /// The data ends before the image does.
        case truncatedData(ImageFormat, message: String)
        /// The header declares more than ``ImageDecodingLimits`` allow; refused before allocating.
        case tooLarge(ImageFormat, message: String)
        /// The pixels could not be allocated.
        case outOfMemory(ImageFormat, message: String)
        /// The image file at `path` could not be opened or read (decoding from a file); `message` says why.
        case unreadableFile(path: String, message: String)
    }

    /// Why encoding failed.
    public enum EncodingFailureReason: Sendable, Equatable {
        /// No registered coder writes this format.
        case unsupportedFormat(ImageFormat)
        /// An option is out of range (for example quality 0).
        case invalidOption(String)
        /// The encoder reported an error.
        case encoderFailed(ImageFormat, message: String)
        /// The format cannot store an image of `size`: a side is over its largest, `limit`
        /// (``ImageCoder/largestEncodableSize``). Checked before the encoder is called.
        case sizeNotEncodable(ImageFormat, size: PixelSize, limit: PixelSize)
    }

    /// Why an image could not be created.
    public enum ImageCreationFailureReason: Sendable, Equatable {
        /// Width or height is not positive, or the byte count overflows.
        case invalidSize(width: Int, height: Int)
        /// The raw byte count is not `width * height * 4`.
        case byteCountMismatch(expected: Int, actual: Int)
        /// An image needs at least one frame.
        case noFrames
        /// All frames of an image must share one size.
        case frameSizeMismatch(expected: PixelSize, actual: PixelSize)
        /// The pixels could not be allocated.
        case outOfMemory(bytes: Int)
    }

    /// Why processing failed.
    public enum ProcessingFailureReason: Sendable, Equatable {
        /// The requested output size is not positive.
        case invalidTargetSize(PixelSize)
        /// A processor description could not be parsed; `message` says where.
        case invalidSpecification(String, message: String)
        /// A processor was given a parameter it cannot work with (a zero size, a negative radius).
        case invalidParameter(processor: String, message: String)
        /// The processor returned no image for its input.
        case processorFailed(identifier: String)
        /// The processor would make an image (`size` per frame, `frames` frames), or need working memory for it,
        /// beyond one of the retrieval's ``ImageDecodingLimits``, named by `limit`; nothing was allocated.
        case outputTooLarge(processor: String, size: PixelSize, frames: Int, limit: ProcessingLimit)
        /// Nobody waits for the result any more (``ImageProcessingContext/isCancelled``); the work stopped early.
        case cancelled
        /// A focal point detector (named by `detector`) could not examine the image; smart cropping fell back.
        case detectionFailed(detector: String, message: String)
        /// A focal point detector had no answer within its time budget; smart cropping fell back, and the answer,
        /// when it comes, is kept for the next request.
        case detectionOverBudget(detector: String, budget: Duration)
    }

    /// The limit of ``ImageDecodingLimits`` a processor's output would break, with the configured value.
    public enum ProcessingLimit: Sendable, Equatable {
        /// A side longer than ``ImageDecodingLimits/maxResultDimension``.
        case dimension(Int)
        /// More pixels in a frame than ``ImageDecodingLimits/maxPixelsPerFrame``.
        case pixelsPerFrame(Int)
        /// More bytes over all frames than ``ImageDecodingLimits/maxTotalBytes``.
        case totalBytes(Int)
        /// Output plus scratch (`needed` bytes) over ``ImageDecodingLimits/maxWorkingBytes`` (`limit`).
        case workingBytes(needed: Int, limit: Int)
    }

    /// Why a cache operation failed.
    public enum CacheFailureReason: Sendable, Equatable {
        /// The cache directory could not be created or opened.
        case cannotCreateDirectory(path: String, message: String)
        /// Writing a file failed; `diskFull` tells ENOSPC/EDQUOT apart from other causes.
        case cannotWrite(path: String, message: String, diskFull: Bool)
        /// Reading a file failed (other than it being absent).
        case cannotRead(path: String, message: String)
        /// The SQLite index failed.
        case indexFailed(path: String, message: String)
        /// An entry is larger than the whole size limit.
        case entryTooLarge(key: String, size: Int, limit: Int)
        /// Serializing an image for the cache failed.
        case serializationFailed(key: String, message: String)
        /// `onlyFromCache` was asked and neither cache holds the key.
        case notCached(key: String)
    }

    /// One line saying what failed and why (the URL, status, file or key involved), for logs and error output.
    public var description: String {
        switch self {
        case .cacheFailed(let reason): "cache failed: \(reason)"
        case .decodingFailed(let reason): "decoding failed: \(reason)"
        case .encodingFailed(let reason): "encoding failed: \(reason)"
        case .imageCreationFailed(let reason): "image creation failed: \(reason)"
        case .processingFailed(let reason): "processing failed: \(reason)"
        case .requestFailed(let reason): "request failed: \(reason)"
        case .responseFailed(let reason): "bad response: \(reason)"
        case .imageSettingFailed(.emptySource): "no source to load: the placeholder is shown"
        case .imageSettingFailed(.notCurrentSourceTask(_, _, let source)):
            "result for \(source.cacheKey) ignored: the target was given another source since"
        }
    }

    /// The decoding reason, when this is a decoding failure: either
    /// ``MagpieError/decodingFailed(reason:)`` or a downloaded body that did not decode
    /// (``MagpieError/ResponseFailureReason/undecodable(_:reason:)``); nil otherwise.
    public var decodingReason: DecodingFailureReason? {
        switch self {
        case .decodingFailed(let reason): reason
        case .responseFailed(reason: .undecodable(_, reason: let reason)): reason
        default: nil
        }
    }
}

extension MagpieError: LocalizedError {
    /// The same text as ``MagpieError/description``, so `localizedDescription` is useful too.
    public var errorDescription: String? { description }
}

extension MagpieError.DecodingFailureReason: CustomStringConvertible {
    /// A short lowercase phrase; ``MagpieError/description`` puts it after what failed.
    public var description: String {
        switch self {
        case .emptyData: "empty data"
        case .unknownFormat(let bytes): "unknown format (not an image; leading bytes \(bytes))"
        case .unsupportedFormat(let format, let detail):
            "unsupported format \(format)" + (detail.map { ": \($0)" } ?? "")
        case .corruptData(let format, let message): Self.phrase("corrupt \(format) data", message)
        case .truncatedData(let format, let message): Self.phrase("truncated \(format) data", message)
        case .tooLarge(let format, let message): "\(format) image too large: \(message)"
        case .outOfMemory(let format, let message): "out of memory decoding \(format): \(message)"
        case .unreadableFile(let path, let message): "cannot read \(path): \(message)"
        }
    }

    /// `lead: message`, without repeating `lead` when the codec's message already starts with it
    /// (libjpeg's warnings read "Corrupt JPEG data: …").
    private static func phrase(_ lead: String, _ message: String) -> String {
        guard message.lowercased().hasPrefix(lead.lowercased() + ":") else { return "\(lead): \(message)" }
        let rest = message.dropFirst(lead.count + 1).drop { $0 == " " }
        return "\(lead): \(rest)"
    }
}

extension MagpieError.EncodingFailureReason: CustomStringConvertible {
    /// A short lowercase phrase; ``MagpieError/description`` puts it after what failed.
    public var description: String {
        switch self {
        case .unsupportedFormat(let format): "no encoder for \(format)"
        case .invalidOption(let message): "invalid option: \(message)"
        case .encoderFailed(let format, let message): "\(format) encoder: \(message)"
        case .sizeNotEncodable(let format, let size, let limit):
            size.height > limit.height && size.width <= limit.width
                ? "\(size) exceeds \(format)'s \(limit.height) rows"
                : size.width > limit.width && size.height <= limit.height
                    ? "\(size) exceeds \(format)'s \(limit.width) columns" : "\(size) exceeds \(format)'s \(limit) pixels"
        }
    }
}

extension MagpieError.ImageCreationFailureReason: CustomStringConvertible {
    /// A short lowercase phrase; ``MagpieError/description`` puts it after what failed.
    public var description: String {
        switch self {
        case .invalidSize(let w, let h): "invalid size \(w)x\(h)"
        case .byteCountMismatch(let expected, let actual): "expected \(expected) bytes of RGBA, got \(actual)"
        case .noFrames: "no frames"
        case .frameSizeMismatch(let expected, let actual): "frame is \(actual), expected \(expected)"
        case .outOfMemory(let bytes): "could not allocate \(bytes) bytes"
        }
    }
}

extension MagpieError.CacheFailureReason: CustomStringConvertible {
    /// A short lowercase phrase; ``MagpieError/description`` puts it after what failed.
    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let message): "cannot create cache directory \(path): \(message)"
        case .cannotWrite(let path, let message, let full): "cannot write \(path): \(message)" + (full ? " (disk full)" : "")
        case .cannotRead(let path, let message): "cannot read \(path): \(message)"
        case .indexFailed(let path, let message): "cache index \(path): \(message)"
        case .entryTooLarge(let key, let size, let limit): "entry \(key) is \(size) bytes, more than the cache's \(limit)"
        case .serializationFailed(let key, let message): "cannot serialize \(key): \(message)"
        case .notCached(let key): "not cached: \(key)"
        }
    }
}

extension MagpieError.ProcessingFailureReason: CustomStringConvertible {
    /// A short lowercase phrase; ``MagpieError/description`` puts it after what failed.
    public var description: String {
        switch self {
        case .invalidTargetSize(let size): "invalid target size \(size)"
        case .invalidSpecification(let spec, let message): "invalid processor \"\(spec)\": \(message)"
        case .invalidParameter(let processor, let message): "\(processor): \(message)"
        case .processorFailed(let identifier): "processor \(identifier) produced no image"
        case .outputTooLarge(let processor, let size, let frames, let limit):
            "processor \(processor) would make a \(size) image\(frames > 1 ? " × \(frames) frames" : ""), \(limit)"
        case .cancelled: "cancelled"
        case .detectionFailed(let detector, let message): "detector \(detector) failed: \(message)"
        case .detectionOverBudget(let detector, let budget): "detector \(detector) took longer than \(budget)"
        }
    }
}

extension MagpieError.ProcessingLimit: CustomStringConvertible {
    /// What was over which limit, for example `over the limit of 16384 pixels a side`.
    public var description: String {
        switch self {
        case .dimension(let limit): "over the limit of \(limit) pixels a side"
        case .pixelsPerFrame(let limit): "over the limit of \(limit) pixels per frame"
        case .totalBytes(let limit): "over the limit of \(limit) bytes in all"
        case .workingBytes(let needed, let limit): "needing \(needed) bytes of working memory, over the limit of \(limit)"
        }
    }
}

extension MagpieError.DecodingFailureReason {
    /// ``unknownFormat(leadingBytes:)`` for `data`: its first 8 bytes in hex, a space between bytes.
    static func unknownFormat(leadingBytesOf data: Data) -> Self {
        .unknownFormat(leadingBytes: data.prefix(8).map(\.hexDigits).joined(separator: " "))
    }
}
