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
    /// Already expired: such an entry is never stored.
    case expired

    /// The expiry date for an entry stored or extended at `now` (`.distantFuture` for `.never`).
    public func estimatedExpiration(since now: Date) -> Date {
        switch self {
        case .never: .distantFuture
        case .seconds(let seconds): now.addingTimeInterval(seconds)
        case .days(let days): now.addingTimeInterval(TimeInterval(days) * 86_400)
        case .date(let date): date
        case .expired: .distantPast
        }
    }

    /// True for `.expired` and for seconds/days ≤ 0.
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
    public init(_ now: @escaping @Sendable () -> Date) {
        self.current = now
    }

    /// The current time.
    public func now() -> Date { current() }

    /// The system clock.
    public static let system = CacheClock { Date() }
}

/// Where a cached image was found.
public enum CacheType: String, Sendable, Equatable, Codable {
    /// Not cached.
    case none
    /// In the memory cache.
    case memory
    /// On disk.
    case disk

    /// True for `.memory` and `.disk`.
    public var cached: Bool { self != .none }
}
