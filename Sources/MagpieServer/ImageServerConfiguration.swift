import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything `magpie serve` (or an application mounting ``ImageServer``) can set. The defaults are the issue's:
/// signed URLs only, the SSRF guard on, 50 MB and 50 MP per source, one worker per core.
public struct ImageServerConfiguration: Sendable {
    /// Key/salt pairs (hex) whose HMAC-SHA256 signatures are accepted; several at once while keys rotate.
    public var signingKeys: [(key: String, salt: String)] = []
    /// Accept unsigned URLs (signature `_` or `insecure`). Off by default; the server logs a warning when on.
    public var allowsUnsigned = false
    /// When non-empty, a source URL (and every redirect) must start with one of these prefixes.
    public var allowedSourcePrefixes: [String] = []
    /// Networks (CIDR) that sources may be in even though they are loopback, private, link-local, CGNAT,
    /// multicast or unspecified; everything else internal is refused after DNS resolution.
    public var allowedNetworks: [String] = []
    /// Folder `local:///path` sources are read from; nil refuses every local source.
    public var localRoot: String?
    /// Largest source body in bytes. Default 50 MB.
    public var maximumSourceBytes = 50 * 1_000_000
    /// Most pixels in one frame of a source, from its header. Default 50 MP.
    public var maximumPixels = 50 * 1_000_000
    /// Most frames in an animated source. Default 1,000.
    public var maximumFrames = 1_000
    /// Most pixels along either side of a result, checked before a resize allocates it (imgproxy's maximum result
    /// dimension). Default 16,384.
    public var maximumResultDimension = 16_384
    /// Most bytes one processing step of a job may hold besides its input: its output and scratch buffers, estimated
    /// and checked before they are allocated (``ImageDecodingLimits/maxWorkingBytes``). Default 1 GiB: a blur of a
    /// 50 MP source at full size needs about that.
    public var maximumWorkingMemory = 1 << 30
    /// Most option segments in one URL, and after its presets are expanded. Default 64.
    public var maximumOptions = 64
    /// Longest a source download may take. Default 10 s.
    public var downloadTimeout: Duration = .seconds(10)
    /// Longest a request may wait for a worker, and longest its decoding, processing and encoding may take.
    /// Default 20 s.
    public var processingTimeout: Duration = .seconds(20)
    /// Processing jobs at once. Default: one per core.
    public var workers = ProcessInfo.processInfo.activeProcessorCount
    /// Jobs that may wait for a worker; past that a request is answered 429. Default 8 × ``workers``.
    public var queueLength: Int?
    /// `max-age` of successful responses. Default one year.
    public var maxAge: Duration = .seconds(365 * 24 * 3600)
    /// `max-age` of error responses that may be cached briefly (404, 415, 422); others get `no-store`. Default 60 s.
    public var errorMaxAge: Duration = .seconds(60)
    /// Where origin bytes and results are kept; nil keeps them in memory only.
    public var cacheDirectory: URL?
    /// Largest size of the disk caches together, in bytes. Default 2 GiB.
    public var diskCacheSize = 2 * 1024 * 1024 * 1024
    /// Bytes of encoded results kept in memory. Default 128 MiB.
    public var memoryCacheSize = 128 * 1024 * 1024
    /// Named option lists, used as `preset:NAME` (imgproxy's `pr:NAME`); one named `default` applies to every URL.
    public var presets: [String: [String]] = [:]
    /// The watermark image imgproxy's `watermark` option draws (its encoded bytes, any format Magpie decodes); nil
    /// draws none.
    public var watermark: Data?
    /// The quality of lossy results whose URL gives none (imgproxy's `IMGPROXY_QUALITY`); nil for imgproxy's defaults
    /// (80; WebP 79, AVIF 63, JPEG XL 77).
    public var defaultQuality: Int?
    /// Qualities per output format, over ``defaultQuality`` (imgproxy's `IMGPROXY_FORMAT_QUALITY`).
    public var formatQuality: [ImageFormat: Int] = [:]
    /// Formats answered to a client whose `Accept` names them even when the URL asks for another (imgproxy's
    /// `IMGPROXY_ENFORCE_AVIF`/`_WEBP`), in order of preference; such answers vary on `Accept`.
    public var enforcedFormats: [ImageFormat] = []
    /// Send a strong `ETag` of every result (imgproxy's `IMGPROXY_USE_ETAG`). Default true.
    public var sendsETag = true
    /// Let URLs set imgproxy's `max_src_resolution`, `max_src_file_size` and `max_animation_frames` (imgproxy's
    /// `IMGPROXY_ALLOW_SECURITY_OPTIONS`); without it they are refused with 403. Default false.
    public var allowsSecurityOptions = false
    /// thumbor's `SECURITY_KEY` (the text itself, not hex), which signs thumbor's URLs (`/SIGNATURE/300x200/…`); nil
    /// accepts none of them (`/unsafe/…` ones follow ``allowsUnsigned``).
    public var thumborSecurityKey: String?
    /// How `smart` crops (thumbor's `smart`, imgproxy's `g:sm`) look for faces before attention: OpenCV's cascade model,
    /// the size of the copy examined and the time budget per image. nil looks for none. A crop whose detection passed the
    /// budget uses attention and is answered but not kept, so a later request gets the faces.
    public var faceDetection: FaceDetector.Configuration? = FaceDetector.Configuration()
    /// Runs before each face detection, on its thread: the tests hold a detection past its budget with it.
    package var beforeFaceDetection: (@Sendable () -> Void)?
    /// Serve the page at `/` that builds signed URLs (development only: it signs with the first key).
    public var developmentPage = false
    /// Log one line per image request (request id, client, method, path without the signature, status, bytes, ms,
    /// cache layer, user agent, and the reason of a refusal). Default true; a server behind a proxy that logs may turn
    /// it off (the line costs about 5 % of a cached answer).
    public var accessLog = true
    /// How access lines are written: through the logger (``AccessLogFormat/text``, the default), or as JSON or
    /// Common/Combined Log Format lines to ``accessLogWriter``.
    public var accessLogFormat = AccessLogFormat.text
    /// Where JSON and CLF access lines go; default standard error, one `write` per line.
    public var accessLogWriter = AccessLogWriter.standardError

    /// The defaults listed on each property.
    public init() {}

    /// The number of waiting jobs allowed: ``queueLength`` or 8 × ``workers``.
    public var effectiveQueueLength: Int { queueLength ?? 8 * max(1, workers) }
}
