/// Parses the IMF-fixdate form of HTTP dates (`Wed, 21 Oct 2015 07:28:00 GMT`), the only form servers send.
///
/// Hand-written so the module needs no Foundation: `If-Modified-Since` only needs the dates as comparable numbers.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since 1970-01-01T00:00:00Z, or `nil` when `text` is not an IMF-fixdate.
    static func secondsSince1970(_ text: String) -> Int? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT",
            let day = Int(fields[1]), (1...31).contains(day),
            let monthIndex = months.firstIndex(where: { $0 == fields[2] }),
            let year = Int(fields[3])
        else { return nil }
        let time = fields[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3, (0...23).contains(time[0]), (0...59).contains(time[1]), (0...60).contains(time[2]) else {
            return nil
        }
        let days = daysSince1970(year: year, month: monthIndex + 1, day: day)
        return days * 86_400 + time[0] * 3_600 + time[1] * 60 + time[2]
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
