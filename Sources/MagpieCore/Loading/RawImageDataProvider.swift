#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Image bytes already in memory, cached under a key of the caller's choosing.
public struct RawImageDataProvider: ImageDataProvider {
    /// The encoded image.
    public let rawData: Data
    /// The key of the image in the caches.
    public let cacheKey: String

    /// A provider that returns `data`, cached under `cacheKey`.
    ///
    /// - Parameters:
    ///   - data: The encoded image (not pixels); it is not checked until it is decoded.
    ///   - cacheKey: The key in the caches; use one that changes when the bytes do.
    public init(data: Data, cacheKey: String) {
        self.rawData = data
        self.cacheKey = cacheKey
    }

    /// ``rawData``; never throws.
    public func data() async throws -> Data { rawData }
}
