#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Namespace wrapper behind `.mg`: Magpie's extensions live on `value.mg` so they never clash
/// with other libraries' extensions of the same types.
public struct MagpieWrapper<Base>: Sendable where Base: Sendable {
    /// The wrapped value.
    public let base: Base
    /// Wraps `base`; normally reached through `value.mg` rather than called.
    ///
    /// - Parameter base: The value the extensions work on.
    public init(_ base: Base) { self.base = base }
}

/// Value types that gain the `.mg` namespace (`Data` conforms).
public protocol MagpieCompatibleValue: Sendable {}

extension MagpieCompatibleValue {
    /// Magpie's extensions on this value.
    public var mg: MagpieWrapper<Self> { MagpieWrapper(self) }
}

extension Data: MagpieCompatibleValue {}

extension MagpieWrapper where Base == Data {
    /// The format sniffed from the data's leading bytes (``ImageFormat/init(sniffing:)``); ``ImageFormat/unknown`` when
    /// none matches.
    public var imageFormat: ImageFormat { ImageFormat(sniffing: base) }
}

/// Reference types that gain the `.mg` namespace; every ``ImageTarget`` is one.
public protocol MagpieCompatible: AnyObject, Sendable {}

extension MagpieCompatible {
    /// Magpie's extensions on this object.
    public var mg: MagpieWrapper<Self> { MagpieWrapper(self) }
}
