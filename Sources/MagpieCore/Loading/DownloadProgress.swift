#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Bytes received so far by one download.
public struct DownloadProgress: Sendable, Equatable {
    /// Body bytes received.
    public var receivedBytes: Int
    /// The body's `Content-Length`, when the server sent one.
    public var expectedBytes: Int?

    /// A progress value.
    ///
    /// - Parameters:
    ///   - receivedBytes: Body bytes received so far.
    ///   - expectedBytes: The `Content-Length`, or nil when unknown.
    public init(receivedBytes: Int, expectedBytes: Int?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }

    /// ``receivedBytes`` / ``expectedBytes``, capped at 1; nil when the size is unknown or zero.
    public var fraction: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(receivedBytes) / Double(expectedBytes))
    }
}

/// Called with progress reports of one caller's download (throttled to at most one per
/// ``ImageDownloader/Configuration/progressInterval``; the last chunk is always reported).
public typealias DownloadProgressHandler = @Sendable (DownloadProgress) -> Void
