/// Why an image URL was refused: the HTTP status to answer with and a message for the response body.
///
/// Messages name the bad part of the URL (quoted, cut to 100 characters) but never the signature, keys or salts.
public struct ServeRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 400 (malformed URL, unknown or bad option, unusable source) or 403 (missing or bad signature).
    public let status: Int
    /// What was wrong, for the response body, for example `unknown option "frobnicate:3" (known: …)`.
    public let message: String

    /// An error with the given status and message.
    ///
    /// - Parameters:
    ///   - status: The HTTP status, 400 or 403.
    ///   - message: The body text; it must not contain secrets.
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    /// A 400 Bad Request.
    ///
    /// - Parameter message: What was wrong.
    public static func badRequest(_ message: String) -> ServeRequestError {
        ServeRequestError(status: 400, message: message)
    }

    /// A 403 Forbidden.
    ///
    /// - Parameter message: What was wrong (never the signature itself).
    public static func forbidden(_ message: String) -> ServeRequestError {
        ServeRequestError(status: 403, message: message)
    }

    /// `"<status>: <message>"`, for logs.
    public var description: String { "\(status): \(message)" }

    /// `text` in double quotes, cut to its first 100 characters: URLs arrive from anyone and may be long.
    static func quoted(_ text: some StringProtocol) -> String {
        text.count > 100 ? "\"\(text.prefix(100))…\" (\(text.utf8.count) bytes)" : "\"\(text)\""
    }
}
