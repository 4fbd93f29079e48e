/// The memory cache port: decoded images by key, with expiry. ``MemoryStorage`` implements it (cost
/// LRU, expiry, a background sweep); a cache of your own — a different eviction policy, one shared
/// with the rest of an application — is one type that conforms, handed to
/// ``ImageCache/init(name:memoryCache:dataCache:)``.
///
/// Calls are synchronous and must be cheap: the pipeline answers a memory hit without suspending.
/// Keys are the ones ``ImageCache`` computes (``CacheKey``), including the decode variant. Limits and their
/// settings are the implementation's own (``MemoryStorage/config``): the pipeline never reads them.
public protocol MemoryCaching: AnyObject, Sendable {
    /// The image under `key`; nil when there is none or it expired. A hit counts as a use (LRU order, expiry).
    ///
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - extendingExpiration: What this read does to the entry's expiry; nil for the cache's default.
    func image(forKey key: String, extendingExpiration: ExpirationExtending?) -> Image?

    /// Stores `image` under `key`, replacing what was there.
    ///
    /// - Parameters:
    ///   - image: The image.
    ///   - key: The entry's key.
    ///   - expiration: When the entry expires; nil for the cache's default.
    func storeImage(_ image: Image, forKey key: String, expiration: StorageExpiration?)

    /// Removes the entry under `key`, if any.
    ///
    /// - Parameter key: The entry's key.
    func removeImage(forKey key: String)

    /// Removes every entry.
    func removeAllImages()

    /// Removes expired entries now; returns how many went.
    func removeExpiredImages() -> Int

    /// Whether an unexpired image is stored under `key`, without counting a use.
    ///
    /// - Parameter key: The entry's key.
    func containsImage(forKey key: String) -> Bool
}

extension MemoryStore: MemoryCaching where Value == Image {
    /// ``value(forKey:extendingExpiration:)``.
    public func image(forKey key: String, extendingExpiration: ExpirationExtending?) -> Image? {
        value(forKey: key, extendingExpiration: extendingExpiration)
    }

    /// ``store(_:forKey:cost:expiration:)`` with the image's own cost (its pixel bytes).
    public func storeImage(_ image: Image, forKey key: String, expiration: StorageExpiration?) {
        store(image, forKey: key, expiration: expiration)
    }

    /// ``remove(forKey:)``.
    public func removeImage(forKey key: String) { remove(forKey: key) }

    /// ``removeAll()``.
    public func removeAllImages() { removeAll() }

    /// ``removeExpired()``.
    public func removeExpiredImages() -> Int { removeExpired() }

    /// ``isCached(forKey:)``.
    public func containsImage(forKey key: String) -> Bool { isCached(forKey: key) }
}

/// The memory layer of a cache made without one: every read misses and every store is dropped.
final class NoMemoryCache: MemoryCaching {
    func image(forKey key: String, extendingExpiration: ExpirationExtending?) -> Image? { nil }
    func storeImage(_ image: Image, forKey key: String, expiration: StorageExpiration?) {}
    func removeImage(forKey key: String) {}
    func removeAllImages() {}
    func removeExpiredImages() -> Int { 0 }
    func containsImage(forKey key: String) -> Bool { false }
}
