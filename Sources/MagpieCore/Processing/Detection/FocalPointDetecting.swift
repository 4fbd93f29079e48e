import Synchronization

/// Finds regions of an image that a crop should keep (faces, objects): the port behind smart cropping. A detector is
/// given the image and answers rectangles in its pixel coordinates, each with a weight; an empty answer means nothing
/// was found (smart cropping then falls back to attention, and a throw does the same).
public protocol FocalPointDetecting: Sendable {
    /// Names the detector and its settings; part of the cache key of every crop that uses it.
    var identifier: String { get }
    /// The regions of `image` worth keeping, strongest first.
    ///
    /// - Throws: When the image cannot be examined in time; smart cropping then uses attention.
    func focalRegions(in image: Image) throws -> [FocalRegion]
    /// The regions of `image`, which is the source named by `sourceKey` (its cache key and what was done to it before),
    /// so a detector may keep its answer for that source whatever scale it is decoded at. Default: `focalRegions(in:)`.
    func focalRegions(in image: Image, sourceKey: String?) throws -> [FocalRegion]
}

extension FocalPointDetecting {
    /// Ignores the source: ``focalRegions(in:)``.
    public func focalRegions(in image: Image, sourceKey: String?) throws -> [FocalRegion] {
        try focalRegions(in: image)
    }
}

/// A rectangle worth keeping, in image pixels, and how much.
public struct FocalRegion: Sendable, Hashable {
    /// Left edge.
    public var x: Double
    /// Top edge.
    public var y: Double
    /// Width.
    public var width: Double
    /// Height.
    public var height: Double
    /// How much it matters relative to the others (a face's size, a detector's confidence).
    public var weight: Double

    /// A region with the given rectangle and weight.
    public init(x: Double, y: Double, width: Double, height: Double, weight: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.weight = weight
    }
}

/// A detector bound to one source for one job: every call passes the source's key, and it remembers whether a call
/// threw, so whoever made the result knows it is a fallback (`magpie serve` does not keep such results).
public final class SourceBoundDetector: FocalPointDetecting {
    /// The detector asked.
    public let base: any FocalPointDetecting
    /// The source's cache key and what was done to it before detection.
    public let sourceKey: String
    private let failed = Mutex(false)

    /// `base`, told `sourceKey` on every call.
    public init(_ base: any FocalPointDetecting, sourceKey: String) {
        self.base = base
        self.sourceKey = sourceKey
    }

    /// The base's identifier.
    public var identifier: String { base.identifier }

    /// The base's regions for the bound source; a throw is remembered and rethrown.
    public func focalRegions(in image: Image) throws -> [FocalRegion] {
        do {
            return try base.focalRegions(in: image, sourceKey: sourceKey)
        } catch {
            failed.withLock { $0 = true }
            throw error
        }
    }

    /// Whether any call threw (its crop fell back to attention).
    public var didFallBack: Bool { failed.withLock { $0 } }
}
