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

/// Kingfisher's progress block: bytes received so far and the expected total (`-1` when the server sent no
/// `Content-Length`). Two parameters, so a one-parameter trailing closure (`{ result in … }`) can never be taken
/// for it: a trailing closure is always the completion handler.
public typealias DownloadProgressBlock = @Sendable (_ receivedSize: Int64, _ totalSize: Int64) -> Void

extension DownloadProgress {
    /// A ``DownloadProgressHandler`` that reports to `block`, or nil without one.
    ///
    /// - Parameter block: Kingfisher's two-number progress block.
    public static func handler(reportingTo block: DownloadProgressBlock?) -> DownloadProgressHandler? {
        guard let block else { return nil }
        return { progress in block(Int64(progress.receivedBytes), Int64(progress.expectedBytes ?? -1)) }
    }
}
