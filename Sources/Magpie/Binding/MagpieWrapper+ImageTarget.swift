import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MagpieWrapper where Base: ImageTarget {
    /// The handler `setImage` calls once with the outcome.
    public typealias CompletionHandler = @Sendable (Result<RetrieveImageResult, MagpieError>) -> Void

    /// Loads `source` into the target (Kingfisher's `setImage(with:placeholder:options:progressBlock:completionHandler:)`).
    ///
    /// Cancels the target's previous request, shows `placeholder` (no placeholder clears the target;
    /// with ``MagpieOption/keepCurrentImageWhileLoading`` a target that shows an image keeps it), starts the
    /// indicator, and retrieves through ``manager``. The image is displayed when it arrives; on
    /// failure ``MagpieOption/onFailureImage(_:)`` is displayed when that option was given (not for a cancellation).
    ///
    /// A result for a request that is no longer the target's current one is not displayed: its
    /// completion gets ``MagpieError/ImageSettingFailureReason/notCurrentSourceTask(result:error:source:)``.
    /// A nil source shows the placeholder and completes with ``MagpieError/ImageSettingFailureReason/emptySource``.
    ///
    /// - Parameters:
    ///   - source: What to load; nil only shows the placeholder.
    ///   - placeholder: Shown until the image arrives; nil (the default) clears the target.
    ///   - options: Retrieval and binding options, applied after the manager's default options; nil for none.
    ///   - progressBlock: Bytes received and expected (-1 when unknown) of this request (the indicator gets them too).
    ///   - completionHandler: Called exactly once, on the options' ``MagpieOption/callbackQueue(_:)``, with the
    ///     result or a ``MagpieError`` (``MagpieError/imageSettingFailed(reason:)`` as described above).
    /// - Returns: The retrieval, or nil for a nil source.
    @discardableResult
    public func setImage(
        with source: Source?, placeholder: (any Placeholder)? = nil, options: [MagpieOption]? = nil,
        progressBlock: DownloadProgressBlock? = nil, completionHandler: CompletionHandler? = nil
    ) -> RetrieveImageTask? {
        base.imageBinding.load(
            source, into: base, placeholder: placeholder, options: options ?? [],
            progress: DownloadProgress.handler(reportingTo: progressBlock), completion: completionHandler)
    }

    /// Loads `source` into the target; a trailing closure is the completion handler
    /// (`target.mg.setImage(with: source, placeholder: p) { result in … }`).
    ///
    /// - Parameters:
    ///   - source: What to load; nil only shows the placeholder.
    ///   - placeholder: Shown until the image arrives; nil (the default) clears the target.
    ///   - options: Retrieval and binding options; nil for none.
    ///   - completionHandler: Called exactly once with the result or the error.
    /// - Returns: The retrieval, or nil for a nil source.
    @discardableResult
    public func setImage(
        with source: Source?, placeholder: (any Placeholder)? = nil, options: [MagpieOption]? = nil,
        completionHandler: @escaping CompletionHandler
    ) -> RetrieveImageTask? {
        setImage(with: source, placeholder: placeholder, options: options, progressBlock: nil, completionHandler: completionHandler)
    }

    /// Loads a resource (a URL works too) into the target; `file:` and `data:` URLs load without HTTP. See
    /// ``setImage(with:placeholder:options:progressBlock:completionHandler:)-(Source?,_,_,_,_)``.
    ///
    /// - Parameters:
    ///   - resource: What to load; nil only shows the placeholder.
    ///   - placeholder: Shown until the image arrives; nil (the default) clears the target.
    ///   - options: Retrieval and binding options; nil for none.
    ///   - progressBlock: Bytes received and expected (-1 when unknown) of this request.
    ///   - completionHandler: Called exactly once with the result or the error.
    /// - Returns: The retrieval, or nil for a nil resource.
    // Disfavoured so that `setImage(with: nil)` means the `Source?` overload instead of being ambiguous.
    @_disfavoredOverload
    @discardableResult
    public func setImage(
        with resource: (any Resource)?, placeholder: (any Placeholder)? = nil, options: [MagpieOption]? = nil,
        progressBlock: DownloadProgressBlock? = nil, completionHandler: CompletionHandler? = nil
    ) -> RetrieveImageTask? {
        setImage(
            with: resource?.convertToSource(), placeholder: placeholder, options: options, progressBlock: progressBlock,
            completionHandler: completionHandler)
    }

    /// Loads a resource (a URL works too) into the target; a trailing closure is the completion handler
    /// (`target.mg.setImage(with: url) { result in … }`).
    ///
    /// - Parameters:
    ///   - resource: What to load; nil only shows the placeholder.
    ///   - placeholder: Shown until the image arrives; nil (the default) clears the target.
    ///   - options: Retrieval and binding options; nil for none.
    ///   - completionHandler: Called exactly once with the result or the error.
    /// - Returns: The retrieval, or nil for a nil resource.
    @_disfavoredOverload
    @discardableResult
    public func setImage(
        with resource: (any Resource)?, placeholder: (any Placeholder)? = nil, options: [MagpieOption]? = nil,
        completionHandler: @escaping CompletionHandler
    ) -> RetrieveImageTask? {
        setImage(
            with: resource?.convertToSource(), placeholder: placeholder, options: options, progressBlock: nil,
            completionHandler: completionHandler)
    }

    /// Cancels the current request: its result is not displayed, the placeholder stays, the indicator
    /// stops and its completion gets ``MagpieError/RequestFailureReason/cancelled(_:)``. Does nothing when no
    /// request runs.
    public func cancelDownloadTask() { base.imageBinding.cancelCurrent() }

    /// The current request's identifier; nil before the first request and after `setImage(with: nil)`.
    public var taskIdentifier: UInt64? { base.imageBinding.taskIdentifier }

    /// The URL of the current request's source (``Source/url``); nil without a request or for providers without a URL.
    public var sourceURL: URL? { base.imageBinding.source?.url }

    /// Shown while the target loads; nil (the default) for none. Replacing it while loading stops the old one
    /// and starts the new one.
    public var indicator: (any Indicator)? {
        get { base.imageBinding.indicator }
        nonmutating set { base.imageBinding.indicator = newValue }
    }

    /// The manager the target's requests use (default ``ImageManager/shared``). Requests already running keep theirs.
    public var manager: ImageManager {
        get { base.imageBinding.manager }
        nonmutating set { base.imageBinding.manager = newValue }
    }
}
