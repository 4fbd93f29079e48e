/// What ``ImageCache/retrieveImage(forKey:options:)`` found.
public enum ImageCacheResult: Sendable {
    /// Found in the memory cache.
    case memory(Image)
    /// Found on disk (decoded, and now also in memory).
    case disk(Image)
    /// Not cached.
    case none

    /// The image, or nil for ``none``.
    public var image: Image? {
        switch self {
        case .memory(let image), .disk(let image): image
        case .none: nil
        }
    }

    /// Which layer answered; ``CacheType/none`` for a miss.
    public var cacheType: CacheType {
        switch self {
        case .memory: .memory
        case .disk: .disk
        case .none: .none
        }
    }
}

/// How ``ImageCache/retrieveImage(forKey:options:)`` looks an image up.
public struct ImageCacheRetrievalOptions: Sendable {
    /// The identifier of the processor that made the wanted variant (`""`, the default, for the original).
    public var processorIdentifier: String
    /// How disk bytes are decoded (target size, scale, limits, …); also picks the memory variant. Default
    /// ``ImageDecodingOptions/default``.
    public var decodingOptions: ImageDecodingOptions
    /// Turns disk bytes back into an image. Default ``DefaultCacheSerializer/default``.
    public var cacheSerializer: any CacheSerializer
    /// Only look in memory. Default false.
    public var memoryOnly: Bool
    /// Expiration given to an image promoted from disk to memory (nil: the memory cache's default).
    public var memoryExpiration: StorageExpiration?
    /// What a memory hit does to the entry's expiry (nil: the memory cache's default).
    public var memoryAccessExtending: ExpirationExtending?
    /// What a disk hit does to the entry's expiry (nil: the disk cache's default).
    public var diskAccessExtending: ExpirationExtending?
    /// Whether an image read from disk is also stored in memory. Default true.
    public var promotesToMemory: Bool

    /// Options with the given values; each parameter sets the property of the same name.
    ///
    /// - Parameters:
    ///   - processorIdentifier: The processor variant; `""` for the original.
    ///   - decodingOptions: How disk bytes are decoded.
    ///   - cacheSerializer: Turns disk bytes into an image.
    ///   - memoryOnly: Skip the disk.
    ///   - memoryExpiration: Expiration of an image promoted from disk.
    ///   - memoryAccessExtending: What a memory hit does to the expiry.
    ///   - diskAccessExtending: What a disk hit does to the expiry.
    ///   - promotesToMemory: Whether an image read from disk is stored in memory too.
    public init(
        processorIdentifier: String = "",
        decodingOptions: ImageDecodingOptions = .default,
        cacheSerializer: any CacheSerializer = DefaultCacheSerializer.default,
        memoryOnly: Bool = false,
        memoryExpiration: StorageExpiration? = nil,
        memoryAccessExtending: ExpirationExtending? = nil,
        diskAccessExtending: ExpirationExtending? = nil,
        promotesToMemory: Bool = true
    ) {
        self.processorIdentifier = processorIdentifier
        self.decodingOptions = decodingOptions
        self.cacheSerializer = cacheSerializer
        self.memoryOnly = memoryOnly
        self.memoryExpiration = memoryExpiration
        self.memoryAccessExtending = memoryAccessExtending
        self.diskAccessExtending = diskAccessExtending
        self.promotesToMemory = promotesToMemory
    }
}

/// The outcome of
/// ``ImageCache/store(_:original:forKey:processorIdentifier:cacheSerializer:toDisk:memoryExpiration:diskExpiration:validators:decodingOptions:)``,
/// per layer: the memory layer cannot fail; the disk
/// layer can (disk full, permissions), and its failure does not undo the memory store.
public struct CacheStoreResult: Sendable {
    /// Always success: the image is in memory.
    public let memoryCacheResult: Result<Void, Never>
    /// Success, the disk failure, or nil when the disk was not asked to store.
    public let diskCacheResult: Result<Void, MagpieError>?
}
