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
    func imageDownloader(_ downloader: ImageDownloader, willSend request: ImageRequest)
    /// A response head arrived.
    func imageDownloader(_ downloader: ImageDownloader, didReceive response: HTTPResponseInfo)
    /// An exchange ended, with its bytes or its error, and its timings.
    func imageDownloader(_ downloader: ImageDownloader, didFinish url: URL, result: Result<ImageDataResult, MagpieError>, metrics: DownloadMetrics)
}

extension ImageDownloaderDelegate {
    public func imageDownloader(_ downloader: ImageDownloader, willSend request: ImageRequest) {}
    public func imageDownloader(_ downloader: ImageDownloader, didReceive response: HTTPResponseInfo) {}
    public func imageDownloader(_ downloader: ImageDownloader, didFinish url: URL, result: Result<ImageDataResult, MagpieError>, metrics: DownloadMetrics) {}
}
