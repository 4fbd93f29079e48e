import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOSSL

extension ImageDownloader {
    /// Downloader-wide settings, fixed when the downloader is created. Per-request settings are in
    /// ``ImageDownloadOptions``.
    public struct Configuration: Sendable {
        /// Longest time one attempt may take, from sending the request to the last body byte. Default 15 s.
        /// A stalled or slow-drip server fails with ``MagpieError/RequestFailureReason/timedOut(_:timeout:)``.
        public var downloadTimeout: Duration = .seconds(15)
        /// Longest time to open a connection (TCP and TLS). Default 10 s. AsyncHTTPClient retries a
        /// refused connection or a failed handshake with back-off until this passes, so an unreachable
        /// host fails after about this long (with the last connection error), not at once.
        public var connectTimeout: Duration = .seconds(10)
        /// Most downloads running at once; more wait in a queue ordered by priority. Default 16.
        public var maximumConcurrentDownloads: Int = 16
        /// Most downloads running at once to one host (and port). Default 6, as browsers do.
        public var maximumConcurrentDownloadsPerHost: Int = 6
        /// Largest body accepted, in bytes. A larger `Content-Length` fails before the body is read;
        /// a body that grows past it is cut off; both fail with
        /// ``MagpieError/ResponseFailureReason/tooLarge(_:limit:declared:)``.
        /// Default 50 MiB.
        public var maximumResponseSize: Int = 50 * 1024 * 1024
        /// Bodies larger than this many bytes (by `Content-Length`, or once that many arrived when it is unknown) are
        /// written to a file as they arrive and handed on memory-mapped, never held in a growing buffer; an interrupted
        /// one is kept and resumed by the next attempt (`Range` + `If-Range`). Default 4 MiB; nil keeps every body in
        /// memory (and resumes nothing).
        public var bodyFileThreshold: Int? = 4 * 1024 * 1024
        /// Where large bodies are written when a request names no folder (``ImageDownloadOptions/spoolDirectory``; the
        /// manager passes its ``DiskStorage``'s ``DiskStorage/spoolDirectory``, on the same volume as the entries).
        /// Default: `magpie-spool` in the system's temporary folder.
        public var spoolDirectory: URL = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-spool")
        /// Most redirects followed for one request; one more fails with
        /// ``MagpieError/RequestFailureReason/tooManyRedirects(_:chain:)``. Default 10.
        public var maximumRedirects: Int = 10
        /// Status codes treated as success. Default 200..<400; a 3xx is never a success by itself:
        /// redirects are followed, 304 answers a conditional request, and any other 3xx fails as
        /// ``MagpieError/ResponseFailureReason/badStatus(_:)``.
        public var acceptableStatusCodes: Set<Int> = Set(200..<400)
        /// Which `Content-Type`s are accepted before the bytes are sniffed. Default
        /// ``ContentTypePolicy/imagesAndOctetStream``.
        public var acceptableContentTypes: ContentTypePolicy = .imagesAndOctetStream
        /// TLS settings (trusted CAs, client certificate, minimum version). Nil uses the system defaults.
        public var tlsConfiguration: TLSConfiguration?
        /// Hosts whose certificates are NOT verified. **Dangerous**: anyone between you and such a host can
        /// read and replace the images. Empty by default; meant for development servers with self-signed certificates.
        public var trustedHosts: Set<String> = []
        /// Refuses connections to internal addresses and URLs outside allowed sources, checked for every hop after DNS
        /// resolution (see ``NetworkAccessPolicy``), and refuses `file:` and `data:` URLs. Default nil: no checks.
        /// Set it when the URLs come from someone else, as in an image server.
        public var networkAccessPolicy: NetworkAccessPolicy?
        /// Sent as `User-Agent` unless a modifier sets one. Default `Magpie/` and the version.
        public var userAgent: String = "Magpie/0.3 (+https://github.com/magpie-swift/magpie)"
        /// Minimum time between two progress reports of one download (the last chunk is always reported). Default 50 ms.
        public var progressInterval: Duration = .milliseconds(50)
        /// Applied to every download before the per-request ``ImageDownloadOptions/requestModifier``. Default nil.
        public var requestModifier: (any ImageDownloadRequestModifier)?
        /// Limits how fast requests start (every attempt, retries included), across hosts; nil (the default) for no
        /// limit. `RateLimiter(requestsPerSecond: 80, burst: 25)` is Nuke's setting.
        public var rateLimiter: RateLimiter?
        /// The retry strategy used when a request sets none. Default nil: no retries.
        public var retryStrategy: (any RetryStrategy)?
        /// Where the downloader logs: each finished or failed download and each retry at debug level,
        /// the `trustedHosts` warning at creation. Default label `magpie.downloader`.
        public var logger: Logger = Logger(label: "magpie.downloader")

        /// The defaults listed on each property; change properties after creating it.
        public init() {}
    }

    /// Which `Content-Type` values a response may have; others fail with
    /// ``MagpieError/ResponseFailureReason/notAnImage(_:sniffed:)``.
    public enum ContentTypePolicy: Sendable, Equatable {
        /// `image/*`, `application/octet-stream` (or `binary/octet-stream`), or none. The bytes must still sniff as an
        /// image.
        case imagesAndOctetStream
        /// Any content type; only the sniffed bytes decide.
        case any
        /// Exactly these types (lowercase, no parameters); a response without `Content-Type` is refused.
        case only(Set<String>)

        func accepts(_ contentType: String?) -> Bool {
            switch self {
            case .any: return true
            case .imagesAndOctetStream:
                guard let contentType, !contentType.isEmpty else { return true }
                return contentType.hasPrefix("image/") || contentType == "application/octet-stream"
                    || contentType == "binary/octet-stream"
            case .only(let types):
                return contentType.map(types.contains) ?? false
            }
        }
    }
}
