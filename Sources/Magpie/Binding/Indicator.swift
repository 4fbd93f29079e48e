/// Shows that a target is loading: a spinner, a progress bar, a log line.
///
/// Every ``startAnimating()`` is followed by exactly one ``stopAnimating()``, when the request that started
/// it ends (image, failure, cancellation, or `setImage(with: nil)`); a request that replaces a
/// loading one keeps the indicator running rather than stopping and restarting it.
/// The methods run outside any Magpie lock, one at a time per target and in order (see ``ImageTarget``).
public protocol Indicator: Sendable {
    /// Loading began: a request started on a target that was not loading.
    func startAnimating()
    /// Loading ended: the request that started it finished, failed or was cancelled.
    func stopAnimating()
    /// Bytes of the current request's download arrived (throttled; not called for cache hits).
    ///
    /// - Parameter progress: Bytes received and, when known, expected. The default implementation ignores it.
    func update(progress: DownloadProgress)
}

extension Indicator {
    /// Ignores progress.
    public func update(progress: DownloadProgress) {}
}
