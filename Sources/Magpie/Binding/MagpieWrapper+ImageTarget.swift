#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MagpieWrapper where Base: ImageTarget {
    /// Loads `source` into the target, Kingfisher's `kf.setImage`.
    ///
    /// Cancels the target's previous request, shows `placeholder` (no placeholder clears the target;
    /// with `keepCurrentImageWhileLoading` a target that shows an image keeps it), starts the
    /// indicator, and retrieves through `manager`. The image is displayed when it arrives; on
    /// failure `onFailureImage` is displayed when that option was given (not for a cancellation).
    ///
    /// A result for a request that is no longer the target's current one is not displayed: its
    /// completion gets `.imageSettingFailed(.notCurrentSourceTask)`. A nil source shows the
    /// placeholder and completes with `.imageSettingFailed(.emptySource)`.
    ///
    /// - Parameters:
    ///   - progress: download progress of this request (the indicator gets it too).
    ///   - completion: called exactly once, on the options' `callbackQueue`.
    /// - Returns: the retrieval, or nil for a nil source.
    @discardableResult
    public func setImage(
        with source: Source?, placeholder: (any Placeholder)? = nil, options: [MagpieOption] = [],
        progress: DownloadProgressHandler? = nil,
        completion: (@Sendable (Result<RetrieveImageResult, MagpieError>) -> Void)? = nil
    ) -> RetrieveImageTask? {
        base.imageBinding.load(
            source, into: base, placeholder: placeholder, options: options, progress: progress, completion: completion)
    }

    /// `setImage(with:)` for a resource (a URL works too); `file:` and `data:` URLs load without HTTP.
    // Disfavoured so that `setImage(with: nil)` means the `Source?` overload instead of being ambiguous.
    @_disfavoredOverload
    @discardableResult
    public func setImage(
        with resource: (any Resource)?, placeholder: (any Placeholder)? = nil, options: [MagpieOption] = [],
        progress: DownloadProgressHandler? = nil,
        completion: (@Sendable (Result<RetrieveImageResult, MagpieError>) -> Void)? = nil
    ) -> RetrieveImageTask? {
        setImage(
            with: resource?.convertToSource(), placeholder: placeholder, options: options, progress: progress,
            completion: completion)
    }

    /// Cancels the current request: its result is not displayed, the placeholder stays, the indicator
    /// stops and its completion gets `RequestFailureReason.cancelled`.
    public func cancelDownloadTask() { base.imageBinding.cancelCurrent() }

    /// The current request's identifier; nil before the first request and after `setImage(with: nil)`.
    public var taskIdentifier: UInt64? { base.imageBinding.taskIdentifier }

    /// The URL of the current request's source (Kingfisher's `webURL`).
    public var sourceURL: URL? { base.imageBinding.source?.url }

    /// Shown while the target loads.
    public var indicator: (any Indicator)? {
        get { base.imageBinding.indicator }
        nonmutating set { base.imageBinding.indicator = newValue }
    }

    /// The manager the target's requests use (default `ImageManager.shared`).
    public var manager: ImageManager {
        get { base.imageBinding.manager }
        nonmutating set { base.imageBinding.manager = newValue }
    }
}
