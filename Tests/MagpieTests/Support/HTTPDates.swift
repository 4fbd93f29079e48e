import Foundation

/// `date` as an HTTP IMF-fixdate (`Fri, 15 Jan 2027 08:00:00 GMT`), for tests that write `Date`, `Expires`,
/// `Last-Modified` or `Retry-After` headers.
func imfFixdate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}
