#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `ImageCache.retrieveImage` found.
public enum ImageCacheResult: Sendable {
    /// Found in the memory cache.
    case memory(Image)
    /// Found on disk (decoded, and now also in memory).
    case disk(Image)
    /// Not cached.
    case none

    /// The image, if any.
    public var image: Image? {
        switch self {
        case .memory(let image), .disk(let image): image
        case .none: nil
        }
    }

    /// Which layer answered.
    public var cacheType: CacheType {
        switch self {
        case .memory: .memory
        case .disk: .disk
        case .none: .none
        }
    }
}

/// How `ImageCache.retrieveImage` looks an image up.
public struct ImageCacheRetrievalOptions: Sendable {
    /// The identifier of the processor that made the wanted variant ("" for the original).
    public var processorIdentifier: String
    /// How disk bytes are decoded (target size, scale, limits, …).
    public var decodingOptions: ImageDecodingOptions
    /// Turns disk bytes back into an image.
    public var cacheSerializer: any CacheSerializer
    /// Only look in memory.
    public var memoryOnly: Bool
    /// Expiration given to an image promoted from disk to memory (nil: the memory cache's default).
    public var memoryExpiration: StorageExpiration?
    /// What a memory hit does to the entry's expiry (nil: the memory cache's default).
    public var memoryAccessExtending: ExpirationExtending?
    /// What a disk hit does to the entry's expiry (nil: the disk cache's default).
    public var diskAccessExtending: ExpirationExtending?

    /// Options with the given values.
    public init(
        processorIdentifier: String = "",
        decodingOptions: ImageDecodingOptions = .default,
        cacheSerializer: any CacheSerializer = DefaultCacheSerializer.default,
        memoryOnly: Bool = false,
        memoryExpiration: StorageExpiration? = nil,
        memoryAccessExtending: ExpirationExtending? = nil,
        diskAccessExtending: ExpirationExtending? = nil
    ) {
        self.processorIdentifier = processorIdentifier
        self.decodingOptions = decodingOptions
        self.cacheSerializer = cacheSerializer
        self.memoryOnly = memoryOnly
        self.memoryExpiration = memoryExpiration
        self.memoryAccessExtending = memoryAccessExtending
        self.diskAccessExtending = diskAccessExtending
    }
}

/// The outcome of `ImageCache.store`, per layer: the memory layer cannot fail; the disk
/// layer can (disk full, permissions), and its failure does not undo the memory store.
public struct CacheStoreResult: Sendable {
    /// Always success: the image is in memory.
    public let memoryCacheResult: Result<Void, Never>
    /// Success, the disk failure, or nil when the disk was not asked to store.
    public let diskCacheResult: Result<Void, MagpieError>?
}
