#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Namespace wrapper behind `.mg`, in the spirit of Kingfisher's `.kf`: Magpie's
/// extensions live on `value.mg` so they never clash with other libraries.
public struct MagpieWrapper<Base>: Sendable where Base: Sendable {
    /// The wrapped value.
    public let base: Base
    /// Wraps `base`.
    public init(_ base: Base) { self.base = base }
}

/// Types that gain the `.mg` namespace.
public protocol MagpieCompatibleValue: Sendable {}

extension MagpieCompatibleValue {
    /// Magpie's extensions on this value.
    public var mg: MagpieWrapper<Self> { MagpieWrapper(self) }
}

extension Data: MagpieCompatibleValue {}

extension MagpieWrapper where Base == Data {
    /// The format sniffed from the data's leading bytes.
    public var imageFormat: ImageFormat { ImageFormat(sniffing: base) }
}

/// Reference types that gain the `.mg` namespace (view-binding targets, later parts).
public protocol MagpieCompatible: AnyObject, Sendable {}

extension MagpieCompatible {
    /// Magpie's extensions on this object.
    public var mg: MagpieWrapper<Self> { MagpieWrapper(self) }
}
