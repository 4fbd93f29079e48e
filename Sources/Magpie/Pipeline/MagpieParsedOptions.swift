import MagpieCore

/// `[MagpieOption]` parsed into fields: what the pipeline reads. Build one with ``init(_:)``. The fields are those of
/// ``Values``, read and set as properties of the options themselves (`options.forceRefresh`, `options.processor = …`).
@dynamicMemberLookup
public struct MagpieParsedOptions: Sendable {
    /// The fields, one per kind of ``MagpieOption``. Each is declared here only: ``MagpieParsedOptions`` reaches them
    /// through ``subscript(dynamicMember:)``, so adding an option means a field here and a case in the parser.
    public struct Values: Sendable {
        /// Set by ``MagpieOption/targetCache(_:)``; nil (the default): the manager's ``ImageManager/cache``.
        public var targetCache: ImageCache?
        /// Set by ``MagpieOption/originalCache(_:)``; nil (the default): the target cache.
        public var originalCache: ImageCache?
        /// Set by ``MagpieOption/forceRefresh``; default false.
        public var forceRefresh: Bool = false
        /// Set by ``MagpieOption/fromMemoryCacheOrRefresh``; default false.
        public var fromMemoryCacheOrRefresh: Bool = false
        /// Set by ``MagpieOption/cacheMemoryOnly``; default false.
        public var cacheMemoryOnly: Bool = false
        /// Set by ``MagpieOption/waitForCache``; default false.
        public var waitForCache: Bool = false
        /// Set by ``MagpieOption/onlyFromCache``; default false.
        public var onlyFromCache: Bool = false
        /// Set by ``MagpieOption/cacheSerializer(_:)``; nil (the default): originals are stored as the bytes that came in,
        /// processed images by ``DefaultCacheSerializer``.
        public var cacheSerializer: (any CacheSerializer)?
        /// Set by ``MagpieOption/cacheOriginalImage``; default false.
        public var cacheOriginalImage: Bool = false
        /// Set by ``MagpieOption/memoryCacheExpiration(_:)``; nil (the default): the memory storage's
        /// ``MemoryStoreConfig/expiration``.
        public var memoryCacheExpiration: StorageExpiration?
        /// Set by ``MagpieOption/memoryCacheAccessExtendingExpiration(_:)``; nil (the default): the memory storage's
        /// ``MemoryStoreConfig/accessExtending``.
        public var memoryCacheAccessExtendingExpiration: ExpirationExtending?
        /// Set by ``MagpieOption/diskCacheExpiration(_:)``; nil (the default): the disk storage's
        /// ``DiskStorage/Config/expiration``.
        public var diskCacheExpiration: StorageExpiration?
        /// Set by ``MagpieOption/diskCacheAccessExtendingExpiration(_:)``; nil (the default): the disk storage's
        /// ``DiskStorage/Config/accessExtending``.
        public var diskCacheAccessExtendingExpiration: ExpirationExtending?
        /// Set by ``MagpieOption/revalidate``; default false.
        public var revalidate: Bool = false
        /// Set by ``MagpieOption/respectCacheControl``; default false.
        public var respectCacheControl: Bool = false
        /// Set by ``MagpieOption/cacheAccess(_:)`` and the per-layer options; default ``CacheAccess/all``.
        public var cacheAccess: CacheAccess = .all
        /// Set by ``MagpieOption/downloader(_:)``; nil (the default): the manager's ``ImageManager/downloader``.
        public var downloader: ImageDownloader?
        /// Set by ``MagpieOption/downloadPriority(_:)``, clamped to 0...1; default 0.5.
        public var downloadPriority: Double = 0.5
        /// Set by ``MagpieOption/downloadTimeout(_:)``; nil (the default): the downloader's
        /// ``ImageDownloader/Configuration/downloadTimeout``.
        public var downloadTimeout: Duration?
        /// Set by ``MagpieOption/requestModifier(_:)``; default nil (only the downloader's own modifier runs).
        public var requestModifier: (any ImageDownloadRequestModifier)?
        /// Set by ``MagpieOption/redirectHandler(_:)``; default nil (redirects are followed).
        public var redirectHandler: (any ImageDownloadRedirectHandler)?
        /// Set by ``MagpieOption/retryStrategy(_:)``; nil (the default): the downloader's
        /// ``ImageDownloader/Configuration/retryStrategy``.
        public var retryStrategy: (any RetryStrategy)?
        /// Set by ``MagpieOption/alternativeSources(_:)``; default empty.
        public var alternativeSources: [Source] = []
        /// Set by ``MagpieOption/retryFailed``; default false.
        public var retryFailed: Bool = false
        /// Set by ``MagpieOption/decodingOptions(_:)``; default ``ImageDecodingOptions/default``. See also
        /// ``MagpieParsedOptions/effectiveDecodingOptions``.
        public var decodingOptions: ImageDecodingOptions = .default
        /// Set by ``MagpieOption/backgroundDecode``; default false. Read by nothing: the option has no effect (see there).
        public var backgroundDecode: Bool = false
        /// Set by ``MagpieOption/scaleFactor(_:)``; nil (the default): the scale in ``decodingOptions``.
        public var scaleFactor: Double?
        /// From `onlyLoadFirstFrame` (true) or `preloadAllAnimationData` (false), whichever came last.
        public var onlyFirstFrame: Bool?
        /// Set by ``MagpieOption/processor(_:)``; default ``DefaultImageProcessor/default`` (no processing). See also
        /// ``MagpieParsedOptions/effectiveProcessor``.
        public var processor: any ImageProcessor = DefaultImageProcessor.default
        /// Set by ``MagpieOption/downsampling(_:)``; default nil.
        public var downsampling: PixelSize?
        /// Set by ``MagpieOption/imageModifier(_:)``; default nil.
        public var imageModifier: (any ImageModifier)?
        /// Set by ``MagpieOption/callbackQueue(_:)``; default ``CallbackQueue/untouch``.
        public var callbackQueue: CallbackQueue = .untouch
        /// Set by ``MagpieOption/onFailureImage(_:)``: nil when the option was not given, `.some(nil)` to clear the target
        /// on failure.
        public var onFailureImage: Image??
        /// Set by ``MagpieOption/keepCurrentImageWhileLoading``; default false.
        public var keepCurrentImageWhileLoading: Bool = false
    }

    /// Copy-on-write box of ``Values``: the pipeline copies its options at every step, and copying the 34 fields
    /// (existentials, caches, closures) would cost a retain each; copying the box costs one.
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

    /// A field of ``Values``, read and set as if it were a property of the options (`options.forceRefresh`). Setting
    /// one copies the shared fields first unless these options are their only owner.
    public subscript<Field>(dynamicMember field: WritableKeyPath<Values, Field>) -> Field {
        get { storage.values[keyPath: field] }
        set { update { $0[keyPath: field] = newValue } }
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

    // The members below read `storage.values.field` rather than `self.field` (the key-path subscript) or a local copy
    // of `storage.values` (a retain of every field).

    /// ``Values/decodingOptions`` with ``Values/scaleFactor`` and ``Values/onlyFirstFrame`` applied, when they are set.
    public var effectiveDecodingOptions: ImageDecodingOptions {
        var options = storage.values.decodingOptions
        if let scaleFactor = storage.values.scaleFactor { options.scale = scaleFactor }
        if let onlyFirstFrame = storage.values.onlyFirstFrame { options.onlyFirstFrame = onlyFirstFrame }
        return options
    }

    /// What a processor is given for this retrieval: ``effectiveDecodingOptions`` and the calling task's cancellation.
    public var processingContext: ImageProcessingContext {
        ImageProcessingContext(decodingOptions: effectiveDecodingOptions)
    }

    /// The processor that runs: a ``DownsamplingImageProcessor`` for ``Values/downsampling`` (when set) followed by
    /// ``Values/processor``.
    public var effectiveProcessor: any ImageProcessor {
        guard let downsampling = storage.values.downsampling else { return storage.values.processor }
        return DownsamplingImageProcessor(size: downsampling) |> storage.values.processor
    }
}
