#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When a cached entry stops being valid.
public enum StorageExpiration: Sendable, Equatable, Hashable, Codable {
    /// Never expires.
    case never
    /// Expires this many seconds after it was stored (or last extended).
    case seconds(TimeInterval)
    /// Expires this many days after it was stored (or last extended).
    case days(Int)
    /// Expires at a fixed date.
    case date(Date)
    /// Already expired: such an entry is never stored (and storing it removes an older one).
    case expired

    /// The expiry date for an entry stored or extended at `now`.
    ///
    /// - Parameter now: When the entry is stored or extended.
    /// - Returns: `now` plus the lifetime; `Date.distantFuture` for ``never``, `Date.distantPast` for ``expired``,
    ///   the date itself for ``date(_:)``.
    public func estimatedExpiration(since now: Date) -> Date {
        switch self {
        case .never: .distantFuture
        case .seconds(let seconds): now.addingTimeInterval(seconds)
        case .days(let days): now.addingTimeInterval(TimeInterval(days) * 86_400)
        case .date(let date): date
        case .expired: .distantPast
        }
    }

    /// True for ``expired`` and for ``seconds(_:)`` or ``days(_:)`` ≤ 0; a ``date(_:)`` in the past is not detected
    /// here.
    public var isExpired: Bool {
        switch self {
        case .expired: true
        case .seconds(let seconds): seconds <= 0
        case .days(let days): days <= 0
        case .never, .date: false
        }
    }
}

/// What reading an entry does to its expiry date.
public enum ExpirationExtending: Sendable, Equatable, Hashable {
    /// Reading leaves the expiry date alone.
    case none
    /// Reading restarts the entry's original expiration (e.g. another 300 s).
    case cacheTime
    /// Reading sets a new expiration from now.
    case expirationTime(StorageExpiration)
}

/// The source of "now" for expiry decisions; injectable so tests need not sleep.
public struct CacheClock: Sendable {
    private let current: @Sendable () -> Date

    /// A clock reading `now`.
    ///
    /// - Parameter now: Returns the current time; called on every cache operation, from any thread.
    public init(_ now: @escaping @Sendable () -> Date) {
        self.current = now
    }

    /// The current time, as the closure given at creation says.
    public func now() -> Date { current() }

    /// The system clock (`Date()`).
    public static let system = CacheClock { Date() }
}

/// Where a cached image was found.
public enum CacheType: String, Sendable, Equatable, Codable {
    /// Not cached.
    case none
    /// In the memory cache.
    case memory
    /// In the disk cache (and, after the read, in memory too).
    case disk

    /// True for ``memory`` and ``disk``.
    public var cached: Bool { self != .none }
}
