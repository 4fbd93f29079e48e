import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `[MagpieOption]` parsed into fields: what the pipeline reads. Build one with ``init(_:)``.
public struct MagpieParsedOptions: Sendable {
    /// The fields, in one allocation shared between copies: the pipeline copies its options at every step,
    /// and a copy of its 33 fields (existentials, caches, closures) cost a retain each; now it costs one.
    struct Values: Sendable {
        var targetCache: ImageCache?
        var originalCache: ImageCache?
        var forceRefresh: Bool = false
        var fromMemoryCacheOrRefresh: Bool = false
        var cacheMemoryOnly: Bool = false
        var waitForCache: Bool = false
        var onlyFromCache: Bool = false
        var cacheSerializer: (any CacheSerializer)?
        var cacheOriginalImage: Bool = false
        var memoryCacheExpiration: StorageExpiration?
        var memoryCacheAccessExtendingExpiration: ExpirationExtending?
        var diskCacheExpiration: StorageExpiration?
        var diskCacheAccessExtendingExpiration: ExpirationExtending?
        var revalidate: Bool = false
        var respectCacheControl: Bool = false
        var cacheAccess: CacheAccess = .all
        var downloader: ImageDownloader?
        var downloadPriority: Double = 0.5
        var downloadTimeout: Duration?
        var requestModifier: (any ImageDownloadRequestModifier)?
        var redirectHandler: (any ImageDownloadRedirectHandler)?
        var retryStrategy: (any RetryStrategy)?
        var alternativeSources: [Source] = []
        var retryFailed: Bool = false
        var decodingOptions: ImageDecodingOptions = .default
        var backgroundDecode: Bool = false
        var scaleFactor: Double?
        var onlyFirstFrame: Bool?
        var processor: any ImageProcessor = DefaultImageProcessor.default
        var downsampling: PixelSize?
        var imageModifier: (any ImageModifier)?
        var callbackQueue: CallbackQueue = .untouch
        var onFailureImage: Image??
        var keepCurrentImageWhileLoading: Bool = false
    }

    /// Copy-on-write box of ``Values``.
    final class Storage: @unchecked Sendable {
        // Only mutated through `update`, which copies the box first unless it is uniquely referenced.
        var values: Values
        /// ``MagpieParsedOptions/readsPlainMemoryEntry``, decided whenever the values change: every memory hit
        /// asks, and deciding reads a dozen fields and builds the decoding options' identifier.
        private(set) var readsPlainMemoryEntry: Bool

        init(_ values: Values) {
            self.values = values
            readsPlainMemoryEntry = Self.readsPlainMemoryEntry(values)
        }

        func changeValues(_ change: (inout Values) -> Void) {
            change(&values)
            readsPlainMemoryEntry = Self.readsPlainMemoryEntry(values)
        }

        private static func readsPlainMemoryEntry(_ values: Values) -> Bool {
            values.targetCache == nil && !values.forceRefresh && !values.revalidate && !values.respectCacheControl
                && values.imageModifier == nil && values.cacheAccess.contains(.memoryReads)
                && values.memoryCacheAccessExtendingExpiration == nil && values.downsampling == nil
                && values.scaleFactor == nil && values.onlyFirstFrame == nil
                && values.decodingOptions.variantIdentifier.isEmpty && values.processor.identifier.isEmpty
        }
    }

    private var storage: Storage

    private mutating func update(_ change: (inout Values) -> Void) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.values) }
        storage.changeValues(change)
    }

    /// Set by ``MagpieOption/targetCache(_:)``; nil (the default): the manager's ``ImageManager/cache``.
    public var targetCache: ImageCache? {
        get { storage.values.targetCache }
        set { update { $0.targetCache = newValue } }
    }
    /// Set by ``MagpieOption/originalCache(_:)``; nil (the default): the target cache.
    public var originalCache: ImageCache? {
        get { storage.values.originalCache }
        set { update { $0.originalCache = newValue } }
    }
    /// Set by ``MagpieOption/forceRefresh``; default false.
    public var forceRefresh: Bool {
        get { storage.values.forceRefresh }
        set { update { $0.forceRefresh = newValue } }
    }
    /// Set by ``MagpieOption/fromMemoryCacheOrRefresh``; default false.
    public var fromMemoryCacheOrRefresh: Bool {
        get { storage.values.fromMemoryCacheOrRefresh }
        set { update { $0.fromMemoryCacheOrRefresh = newValue } }
    }
    /// Set by ``MagpieOption/cacheMemoryOnly``; default false.
    public var cacheMemoryOnly: Bool {
        get { storage.values.cacheMemoryOnly }
        set { update { $0.cacheMemoryOnly = newValue } }
    }
    /// Set by ``MagpieOption/waitForCache``; default false.
    public var waitForCache: Bool {
        get { storage.values.waitForCache }
        set { update { $0.waitForCache = newValue } }
    }
    /// Set by ``MagpieOption/onlyFromCache``; default false.
    public var onlyFromCache: Bool {
        get { storage.values.onlyFromCache }
        set { update { $0.onlyFromCache = newValue } }
    }
    /// Set by ``MagpieOption/cacheSerializer(_:)``; nil (the default): originals are stored as the bytes that came in,
    /// processed images by ``DefaultCacheSerializer``.
    public var cacheSerializer: (any CacheSerializer)? {
        get { storage.values.cacheSerializer }
        set { update { $0.cacheSerializer = newValue } }
    }
    /// Set by ``MagpieOption/cacheOriginalImage``; default false.
    public var cacheOriginalImage: Bool {
        get { storage.values.cacheOriginalImage }
        set { update { $0.cacheOriginalImage = newValue } }
    }
    /// Set by ``MagpieOption/memoryCacheExpiration(_:)``; nil (the default): the memory storage's
    /// ``MemoryStorage/Config/expiration``.
    public var memoryCacheExpiration: StorageExpiration? {
        get { storage.values.memoryCacheExpiration }
        set { update { $0.memoryCacheExpiration = newValue } }
    }
    /// Set by ``MagpieOption/memoryCacheAccessExtendingExpiration(_:)``; nil (the default): the memory storage's
    /// ``MemoryStorage/Config/accessExtending``.
    public var memoryCacheAccessExtendingExpiration: ExpirationExtending? {
        get { storage.values.memoryCacheAccessExtendingExpiration }
        set { update { $0.memoryCacheAccessExtendingExpiration = newValue } }
    }
    /// Set by ``MagpieOption/diskCacheExpiration(_:)``; nil (the default): the disk storage's
    /// ``DiskStorage/Config/expiration``.
    public var diskCacheExpiration: StorageExpiration? {
        get { storage.values.diskCacheExpiration }
        set { update { $0.diskCacheExpiration = newValue } }
    }
    /// Set by ``MagpieOption/diskCacheAccessExtendingExpiration(_:)``; nil (the default): the disk storage's
    /// ``DiskStorage/Config/accessExtending``.
    public var diskCacheAccessExtendingExpiration: ExpirationExtending? {
        get { storage.values.diskCacheAccessExtendingExpiration }
        set { update { $0.diskCacheAccessExtendingExpiration = newValue } }
    }
    /// Set by ``MagpieOption/revalidate``; default false.
    public var revalidate: Bool {
        get { storage.values.revalidate }
        set { update { $0.revalidate = newValue } }
    }
    /// Set by ``MagpieOption/respectCacheControl``; default false.
    public var respectCacheControl: Bool {
        get { storage.values.respectCacheControl }
        set { update { $0.respectCacheControl = newValue } }
    }
    /// Set by ``MagpieOption/cacheAccess(_:)`` and the per-layer options; default ``CacheAccess/all``.
    public var cacheAccess: CacheAccess {
        get { storage.values.cacheAccess }
        set { update { $0.cacheAccess = newValue } }
    }
    /// Set by ``MagpieOption/downloader(_:)``; nil (the default): the manager's ``ImageManager/downloader``.
    public var downloader: ImageDownloader? {
        get { storage.values.downloader }
        set { update { $0.downloader = newValue } }
    }
    /// Set by ``MagpieOption/downloadPriority(_:)``, clamped to 0...1; default 0.5.
    public var downloadPriority: Double {
        get { storage.values.downloadPriority }
        set { update { $0.downloadPriority = newValue } }
    }
    /// Set by ``MagpieOption/downloadTimeout(_:)``; nil (the default): the downloader's
    /// ``ImageDownloader/Configuration/downloadTimeout``.
    public var downloadTimeout: Duration? {
        get { storage.values.downloadTimeout }
        set { update { $0.downloadTimeout = newValue } }
    }
    /// Set by ``MagpieOption/requestModifier(_:)``; default nil (only the downloader's own modifier runs).
    public var requestModifier: (any ImageDownloadRequestModifier)? {
        get { storage.values.requestModifier }
        set { update { $0.requestModifier = newValue } }
    }
    /// Set by ``MagpieOption/redirectHandler(_:)``; default nil (redirects are followed).
    public var redirectHandler: (any ImageDownloadRedirectHandler)? {
        get { storage.values.redirectHandler }
        set { update { $0.redirectHandler = newValue } }
    }
    /// Set by ``MagpieOption/retryStrategy(_:)``; nil (the default): the downloader's
    /// ``ImageDownloader/Configuration/retryStrategy``.
    public var retryStrategy: (any RetryStrategy)? {
        get { storage.values.retryStrategy }
        set { update { $0.retryStrategy = newValue } }
    }
    /// Set by ``MagpieOption/alternativeSources(_:)``; default empty.
    public var alternativeSources: [Source] {
        get { storage.values.alternativeSources }
        set { update { $0.alternativeSources = newValue } }
    }
    /// Set by ``MagpieOption/retryFailed``; default false.
    public var retryFailed: Bool {
        get { storage.values.retryFailed }
        set { update { $0.retryFailed = newValue } }
    }
    /// Set by ``MagpieOption/decodingOptions(_:)``; default ``ImageDecodingOptions/default``. See also
    /// ``effectiveDecodingOptions``.
    public var decodingOptions: ImageDecodingOptions {
        get { storage.values.decodingOptions }
        set { update { $0.decodingOptions = newValue } }
    }
    /// Set by ``MagpieOption/backgroundDecode``; default false.
    public var backgroundDecode: Bool {
        get { storage.values.backgroundDecode }
        set { update { $0.backgroundDecode = newValue } }
    }
    /// Set by ``MagpieOption/scaleFactor(_:)``; nil (the default): the scale in ``decodingOptions``.
    public var scaleFactor: Double? {
        get { storage.values.scaleFactor }
        set { update { $0.scaleFactor = newValue } }
    }
    /// From `onlyLoadFirstFrame` (true) or `preloadAllAnimationData` (false), whichever came last.
    public var onlyFirstFrame: Bool? {
        get { storage.values.onlyFirstFrame }
        set { update { $0.onlyFirstFrame = newValue } }
    }
    /// Set by ``MagpieOption/processor(_:)``; default ``DefaultImageProcessor/default`` (no processing). See also
    /// ``effectiveProcessor``.
    public var processor: any ImageProcessor {
        get { storage.values.processor }
        set { update { $0.processor = newValue } }
    }
    /// Set by ``MagpieOption/downsampling(_:)``; default nil.
    public var downsampling: PixelSize? {
        get { storage.values.downsampling }
        set { update { $0.downsampling = newValue } }
    }
    /// Set by ``MagpieOption/imageModifier(_:)``; default nil.
    public var imageModifier: (any ImageModifier)? {
        get { storage.values.imageModifier }
        set { update { $0.imageModifier = newValue } }
    }
    /// Set by ``MagpieOption/callbackQueue(_:)``; default ``CallbackQueue/untouch``.
    public var callbackQueue: CallbackQueue {
        get { storage.values.callbackQueue }
        set { update { $0.callbackQueue = newValue } }
    }
    /// Set by ``MagpieOption/onFailureImage(_:)``: nil when the option was not given, `.some(nil)` to clear the target
    /// on failure.
    public var onFailureImage: Image?? {
        get { storage.values.onFailureImage }
        set { update { $0.onFailureImage = newValue } }
    }
    /// Set by ``MagpieOption/keepCurrentImageWhileLoading``; default false.
    public var keepCurrentImageWhileLoading: Bool {
        get { storage.values.keepCurrentImageWhileLoading }
        set { update { $0.keepCurrentImageWhileLoading = newValue } }
    }

    /// Parses `options`; a later option of the same kind overrides an earlier one.
    ///
    /// - Parameter options: The options, in order (the manager puts its ``ImageManager/defaultOptions`` first).
    public init(_ options: [MagpieOption]) {
        var values = Values()
        for option in options { Self.apply(option, to: &values) }
        storage = Storage(values)
    }

    private static func apply(_ option: MagpieOption, to values: inout Values) {
        switch option {
        case .targetCache(let value): values.targetCache = value
        case .originalCache(let value): values.originalCache = value
        case .forceRefresh: values.forceRefresh = true
        case .fromMemoryCacheOrRefresh: values.fromMemoryCacheOrRefresh = true
        case .cacheMemoryOnly: values.cacheMemoryOnly = true
        case .waitForCache: values.waitForCache = true
        case .onlyFromCache: values.onlyFromCache = true
        case .cacheSerializer(let value): values.cacheSerializer = value
        case .cacheOriginalImage: values.cacheOriginalImage = true
        case .memoryCacheExpiration(let value): values.memoryCacheExpiration = value
        case .memoryCacheAccessExtendingExpiration(let value): values.memoryCacheAccessExtendingExpiration = value
        case .diskCacheExpiration(let value): values.diskCacheExpiration = value
        case .diskCacheAccessExtendingExpiration(let value): values.diskCacheAccessExtendingExpiration = value
        case .revalidate: values.revalidate = true
        case .respectCacheControl: values.respectCacheControl = true
        case .cacheAccess(let value): values.cacheAccess = value
        case .memoryCacheReads(let on): values.cacheAccess.set(.memoryReads, on)
        case .memoryCacheWrites(let on): values.cacheAccess.set(.memoryWrites, on)
        case .diskCacheReads(let on): values.cacheAccess.set(.diskReads, on)
        case .diskCacheWrites(let on): values.cacheAccess.set(.diskWrites, on)
        case .downloader(let value): values.downloader = value
        case .downloadPriority(let value): values.downloadPriority = min(1, max(0, value))
        case .downloadTimeout(let value): values.downloadTimeout = value
        case .requestModifier(let value): values.requestModifier = value
        case .redirectHandler(let value): values.redirectHandler = value
        case .retryStrategy(let value): values.retryStrategy = value
        case .alternativeSources(let value): values.alternativeSources = value
        case .retryFailed: values.retryFailed = true
        case .decodingOptions(let value): values.decodingOptions = value
        case .backgroundDecode: values.backgroundDecode = true
        case .scaleFactor(let value): values.scaleFactor = value
        case .preloadAllAnimationData: values.onlyFirstFrame = false
        case .onlyLoadFirstFrame: values.onlyFirstFrame = true
        case .processor(let value): values.processor = value
        case .downsampling(let value): values.downsampling = value
        case .imageModifier(let value): values.imageModifier = value
        case .callbackQueue(let value): values.callbackQueue = value
        case .onFailureImage(let value): values.onFailureImage = .some(value)
        case .keepCurrentImageWhileLoading: values.keepCurrentImageWhileLoading = true
        }
    }

    /// True when these options read the memory cache exactly as no options do: the unprocessed image under its plain
    /// key, from the manager's own cache, with the storage's expiry rules, nothing to refresh or revalidate and no
    /// modifier. The manager answers such a memory hit before building the rest of the request.
    var readsPlainMemoryEntry: Bool { storage.readsPlainMemoryEntry }

    /// ``decodingOptions`` with ``scaleFactor`` and ``onlyFirstFrame`` applied, when they are set.
    public var effectiveDecodingOptions: ImageDecodingOptions {
        var options = decodingOptions
        if let scaleFactor { options.scale = scaleFactor }
        if let onlyFirstFrame { options.onlyFirstFrame = onlyFirstFrame }
        return options
    }

    /// What a processor is given for this retrieval: ``effectiveDecodingOptions`` and the calling task's cancellation.
    public var processingContext: ImageProcessingContext {
        ImageProcessingContext(decodingOptions: effectiveDecodingOptions)
    }

    /// The processor that runs: a ``DownsamplingImageProcessor`` for ``downsampling`` (when set) followed by
    /// ``processor``.
    public var effectiveProcessor: any ImageProcessor {
        guard let downsampling else { return processor }
        return DownsamplingImageProcessor(size: downsampling) |> processor
    }

    /// The download options these imply.
    func downloadOptions(validators: HTTPValidators? = nil, spoolDirectory: URL? = nil) -> ImageDownloadOptions {
        var options = ImageDownloadOptions(
            timeout: downloadTimeout, priority: downloadPriority, requestModifier: requestModifier,
            redirectHandler: redirectHandler, retryStrategy: retryStrategy, decodingOptions: effectiveDecodingOptions,
            validators: validators)
        options.spoolDirectory = spoolDirectory
        return options
    }
}
