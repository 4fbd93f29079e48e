#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Parses the HTTP date formats of RFC 9110 §5.6.7 (IMF-fixdate, RFC 850, asctime),
/// for `Retry-After`, caching headers and the server's conditional requests; formats IMF-fixdate. Written by hand
/// because FoundationEssentials has no date parser.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date, or nil when `text` is none of the three formats.
    package static func parse(_ text: String) -> Date? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT -> [Sun, 06, Nov, 1994, 08:49:37, GMT]
        // RFC 850:     Sunday, 06-Nov-94 08:49:37 GMT -> [Sunday, 06-Nov-94, 08:49:37, GMT]
        // asctime:     Sun Nov  6 08:49:37 1994       -> [Sun, Nov, 6, 08:49:37, 1994]
        var day: Int?, month: Int?, year: Int?, time: String?
        if words.count == 6, words[5] == "GMT" {
            (day, month, year, time) = (Int(words[1]), monthNumber(words[2]), Int(words[3]), words[4])
        } else if words.count == 4, words[3] == "GMT" {
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let shortYear = Int(parts[2]) else { return nil }
            // A fixed pivot rather than RFC 9110's "more than 50 years ahead" rule: 00–69 are 20xx, 70–99 19xx, so the
            // common "already expired" value 01-Jan-70 stays in 1970 whatever the year now.
            (day, month, year, time) = (Int(parts[0]), monthNumber(parts[1]), shortYear < 70 ? 2000 + shortYear : 1900 + shortYear, words[2])
        } else if words.count == 5 {
            (day, month, year, time) = (Int(words[2]), monthNumber(words[1]), Int(words[4]), words[3])
        }
        // Bounded years keep the arithmetic below far from overflow (a hostile header must not trap).
        guard let day, let month, let year, let time, (1...31).contains(day), (1...9999).contains(year) else { return nil }
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]) else { return nil }
        let seconds = daysFromCivil(year: year, month: month, day: day) * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), whole seconds (rounded down).
    package static func format(_ date: Date) -> String {
        let t = CivilTime(date)
        return "\(t.weekdayName), \(two(t.day)) \(t.monthName) \(t.year) \(two(t.hour)):\(two(t.minute)):\(two(t.second)) GMT"
    }

    /// `date` as access logs in the Common Log Format write it: `06/Nov/1994:08:49:37 +0000` (UTC).
    package static func commonLogFormat(_ date: Date) -> String {
        let t = CivilTime(date)
        return "\(two(t.day))/\(t.monthName)/\(t.year):\(two(t.hour)):\(two(t.minute)):\(two(t.second)) +0000"
    }

    /// `date` in RFC 3339 with milliseconds, UTC: `1994-11-06T08:49:37.250Z`.
    package static func rfc3339(_ date: Date) -> String {
        let t = CivilTime(date)
        let milliseconds = (Int((date.timeIntervalSince1970 * 1000).rounded(.down)) % 1000 + 1000) % 1000
        let millis = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(t.year)-\(two(t.month))-\(two(t.day))T\(two(t.hour)):\(two(t.minute)):\(two(t.second)).\(millis)Z"
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// A moment's UTC calendar date and clock time, whole seconds (rounded down).
    private struct CivilTime {
        let year, month, day, hour, minute, second: Int
        let weekdayName: String

        var monthName: String { HTTPDate.months[month - 1].prefix(1).uppercased() + HTTPDate.months[month - 1].dropFirst() }

        init(_ date: Date) {
            let seconds = Int(date.timeIntervalSince1970.rounded(.down))
            let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
            let time = seconds - days * 86_400
            // Howard Hinnant's civil_from_days.
            let shifted = days + 719_468
            let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
            let dayOfEra = shifted - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
            // 1970-01-01 was a Thursday.
            weekdayName = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
            (hour, minute, second) = (time / 3600, time / 60 % 60, time % 60)
        }
    }

    private static func monthNumber(_ name: String) -> Int? {
        months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
