import ArgumentParser
import Foundation

/// A number of bytes as the user writes it: plain bytes (`1048576`), or a number with a decimal unit (`kB`, `MB`,
/// `GB`, `TB`: powers of 1000) or a binary one (`KiB`, `MiB`, `GiB`, `TiB`: powers of 1024), such as `500MB`,
/// `2GiB` or `1.5GB`. Unit letters are case-insensitive, a space may separate number and unit, and a trailing `B`
/// alone means bytes. Negative numbers and anything else are refused.
struct ByteCount: Equatable, Sendable, ExpressibleByArgument, CustomStringConvertible {
    /// The number of bytes.
    let bytes: Int

    /// A count of exactly `bytes`.
    init(bytes: Int) {
        self.bytes = bytes
    }

    /// Parses `text`; nil when it is not a non-negative size that fits in an `Int`.
    init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let numberEnd = trimmed.firstIndex { !($0.isASCII && ($0.isNumber || $0 == ".")) } ?? trimmed.endIndex
        let number = trimmed[..<numberEnd]
        let unit = trimmed[numberEnd...].trimmingCharacters(in: .whitespaces).lowercased()
        // Digits and at most one point only: Double(_:) alone would also take "1e3", "inf" and "-1".
        guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, number != ".",
            let value = Double(number), let multiplier = Self.multipliers[unit]
        else { return nil }
        let total = (value * multiplier).rounded()
        guard total < Double(Int.max) else { return nil }
        bytes = Int(total)
    }

    /// For ArgumentParser: the same as ``init(parsing:)``.
    init?(argument: String) {
        self.init(parsing: argument)
    }

    /// The unit suffixes (lowercased) and what they multiply by.
    private static let multipliers: [String: Double] = [
        "": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
        "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776,
    ]

    /// The plain byte count, as accepted back by ``init(parsing:)``.
    var description: String { "\(bytes)" }
}
