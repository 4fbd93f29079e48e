import MagpieCore
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Date` and `Server` fields for responses written outside Hummingbird's responder (``MemoryHitHandler``):
/// the date is formatted once per second, not once per response.
final class ResponseHeaderClock: Sendable {
    /// The `Server` field, or nil for none.
    let serverName: String?
    private let formatted = Mutex<(second: Int, text: String)>((-1, ""))

    init(serverName: String?) {
        self.serverName = serverName
    }

    /// The current time as an IMF-fixdate.
    func date() -> String {
        let now = Date()
        let second = Int(now.timeIntervalSince1970.rounded(.down))
        return formatted.withLock { formatted in
            if formatted.second != second { formatted = (second, HTTPDate.format(now)) }
            return formatted.text
        }
    }
}
