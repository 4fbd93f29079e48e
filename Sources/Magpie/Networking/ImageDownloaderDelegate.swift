import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Hooks into one downloader's HTTP exchanges, for logging and metrics. Called once per
/// exchange (not per deduplicated caller), from the downloading task; keep them quick.
/// Every method has an empty default.
public protocol ImageDownloaderDelegate: Sendable {
    /// A request is about to be sent (after the modifier; again for each redirect and retry).
    ///
    /// - Parameters:
    ///   - downloader: The downloader sending it.
    ///   - request: The request as it goes out.
    func imageDownloader(_ downloader: ImageDownloader, willSend request: ImageRequest)
    /// A response head arrived (status and headers; the body follows).
    ///
    /// - Parameters:
    ///   - downloader: The downloader that received it.
    ///   - response: The response's URL, status and headers; redirects are reported too.
    func imageDownloader(_ downloader: ImageDownloader, didReceive response: HTTPResponseInfo)
    /// An exchange ended, with its bytes or its error, and its timings.
    ///
    /// - Parameters:
    ///   - downloader: The downloader that made the exchange.
    ///   - url: The URL requested, after the request modifier and before any redirect.
    ///   - result: The downloaded bytes and response, or why the download failed.
    ///   - metrics: Timings and byte count of the exchange (all zero when it failed).
    func imageDownloader(_ downloader: ImageDownloader, didFinish url: URL, result: Result<ImageDataResult, MagpieError>, metrics: DownloadMetrics)
}

extension ImageDownloaderDelegate {
    /// Does nothing.
    public func imageDownloader(_ downloader: ImageDownloader, willSend request: ImageRequest) {}
    /// Does nothing.
    public func imageDownloader(_ downloader: ImageDownloader, didReceive response: HTTPResponseInfo) {}
    /// Does nothing.
    public func imageDownloader(_ downloader: ImageDownloader, didFinish url: URL, result: Result<ImageDataResult, MagpieError>, metrics: DownloadMetrics) {}
}
