#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How long the phases of one download took.
public struct DownloadMetrics: Sendable, Equatable {
    /// Time spent waiting in the downloader's queue for a free slot.
    public var queued: Duration = .zero
    /// From sending the (last) request to its response head: time to first byte, connection set-up included.
    /// AsyncHTTPClient does not report DNS and connect times separately.
    public var timeToFirstByte: Duration = .zero
    /// From leaving the queue to the last body byte, redirects and retries included.
    public var total: Duration = .zero
    /// Body bytes received over the network (0 for a 304 or a data provider).
    public var bytesReceived: Int = 0
    /// Redirects followed.
    public var redirectCount: Int = 0
    /// Retries made after the first attempt.
    public var retryCount: Int = 0

    /// Metrics with every duration and count zero.
    public init() {}
}

/// The bytes of one download, before decoding.
public struct ImageDataResult: Sendable {
    /// The body; empty when ``notModified``.
    public var data: Data
    /// The URL asked for (before redirects; after the request modifier).
    public var url: URL
    /// The final response, nil for `file:` and `data:` URLs.
    public var response: HTTPResponseInfo?
    /// True when the server answered `304 Not Modified` to a conditional request: the cached copy is current.
    public var notModified: Bool
    /// Timings and counts (all zero for `file:` and `data:` URLs).
    public var metrics: DownloadMetrics
    /// The headers the final request carried (after modifiers, with the defaults the loader adds; no conditional
    /// headers): what a response's `Vary` is matched against. Empty when there was no HTTP request.
    public var requestHeaders: [HTTPHeaderField] = []

    /// A result; loaders (``ImageDataLoading``) make these.
    ///
    /// - Parameters:
    ///   - data: The body; empty for a 304.
    ///   - url: The URL asked for.
    ///   - response: The final response, nil when there was no HTTP exchange.
    ///   - notModified: True for a `304 Not Modified` answer to a conditional request.
    ///   - metrics: Timings and counts; zero by default.
    public init(data: Data, url: URL, response: HTTPResponseInfo?, notModified: Bool = false, metrics: DownloadMetrics = DownloadMetrics()) {
        self.data = data
        self.url = url
        self.response = response
        self.notModified = notModified
        self.metrics = metrics
    }
}

extension ImageDataResult {
    /// The body decoded with `options`; a decoding failure of an HTTP body becomes
    /// `ResponseFailureReason.undecodable` with the response, so it names the URL.
    package func decodedImage(options: ImageDecodingOptions) throws -> Image {
        do {
            return try ImageCoderRegistry.shared.decode(data, options: options)
        } catch let error as MagpieError {
            guard let response, let reason = error.decodingReason else { throw error }
            throw MagpieError.responseFailed(reason: .undecodable(response, reason: reason))
        }
    }

    /// The body decoded with `decodingOptions`, with the bytes, response and metrics it came from.
    package func loadingResult(decodingOptions: ImageDecodingOptions) throws -> ImageLoadingResult {
        ImageLoadingResult(
            image: try decodedImage(options: decodingOptions), url: url, originalData: data, response: response, metrics: metrics)
    }
}

/// A downloaded and decoded image, with the bytes and response it came from.
public struct ImageLoadingResult: Sendable {
    /// The decoded image.
    public var image: Image
    /// The URL asked for (after the request modifier, before redirects).
    public var url: URL
    /// The body as received, before decoding.
    public var originalData: Data
    /// The final response, nil for `file:` and `data:` URLs.
    public var response: HTTPResponseInfo?
    /// Timings and counts (all zero for `file:` and `data:` URLs).
    public var metrics: DownloadMetrics
    /// The headers the final request carried (after modifiers, with the defaults the loader adds; no conditional
    /// headers): what a response's `Vary` is matched against. Empty when there was no HTTP request.
    public var requestHeaders: [HTTPHeaderField] = []

    /// A result.
    ///
    /// - Parameters:
    ///   - image: The decoded image.
    ///   - url: The URL asked for.
    ///   - originalData: The body as received.
    ///   - response: The final response, nil when there was no HTTP exchange.
    ///   - metrics: Timings and counts.
    public init(image: Image, url: URL, originalData: Data, response: HTTPResponseInfo?, metrics: DownloadMetrics) {
        self.image = image
        self.url = url
        self.originalData = originalData
        self.response = response
        self.metrics = metrics
    }
}
