import Logging
import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How ``ImageServer`` writes its access lines.
public enum AccessLogFormat: String, Sendable, CaseIterable {
    /// Through the server's logger at info: `GET /…/plain/… 200` with the fields as metadata.
    case text
    /// One JSON object per line: `{"time":…,"id":…,"client":…,"method":…,"path":…,"status":…,…}`.
    case json
    /// The Common Log Format: `client - - [time] "GET path HTTP/1.1" status bytes`.
    case common
    /// The Combined Log Format: the common line, then `"referer" "user-agent"`.
    case combined
}

/// Where JSON and CLF access lines go: a function given each line, newline included.
public struct AccessLogWriter: Sendable {
    /// Writes one line.
    public let write: @Sendable (String) -> Void

    /// A writer calling `write` with each line.
    public init(_ write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    /// Standard error, one `write(2)` per line (shorter than a pipe's atomic size, so lines never interleave).
    public static let standardError = AccessLogWriter(writeToStandardError)
}

private func writeToStandardError(_ line: String) {
    var line = line
    // A line standard error refuses has nowhere else to go: it is dropped, and the server goes on.
    _ = line.withUTF8 { LocalFileSystem.writeAll(2, UnsafeRawBufferPointer($0)) }
}

/// One answered request as the access log records it.
struct AccessLogEntry {
    let request: ImageServerRequest
    let status: String
    let bytes: Int
    let elapsed: Duration
    let cacheLayer: String
    let reason: String?

    var milliseconds: Double {
        let value = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        return (value * 10).rounded() / 10
    }

    /// The path with the signature elided (`/SIGNATURE/rest` → `/…/rest`): signatures are credentials of a kind.
    var path: String { ImageServer.elidingSignature(request.path) }

    func write(format: AccessLogFormat, logger: Logger, writer: AccessLogWriter) {
        switch format {
        case .text:
            var metadata: Logger.Metadata = [
                "status": "\(status)", "bytes": "\(bytes)", "ms": "\(milliseconds)", "cache": "\(cacheLayer)",
            ]
            if let id = request.requestID { metadata["id"] = "\(id)" }
            if let client = request.clientAddress { metadata["client"] = "\(client)" }
            if let agent = request.userAgent { metadata["ua"] = "\(agent)" }
            if let reason { metadata["reason"] = "\(reason)" }
            logger.info("\(request.method) \(path) \(status)", metadata: metadata)
        case .json:
            writer.write(json + "\n")
        case .common:
            writer.write(common + "\n")
        case .combined:
            writer.write(common + " \(Self.quoted(request.referer)) \(Self.quoted(request.userAgent))\n")
        }
    }

    private var common: String {
        let size = bytes > 0 ? String(bytes) : "-"
        let clf = HTTPDate.commonLogFormat(Date())
        return "\(request.clientAddress ?? "-") - - [\(clf)] \"\(request.method) \(Self.escaped(path)) HTTP/1.1\" \(status) \(size)"
    }

    private var json: String {
        var fields: [(String, String)] = [
            ("time", JSONText.string(HTTPDate.rfc3339(Date()))),
            ("id", request.requestID.map(JSONText.string) ?? "null"),
            ("client", request.clientAddress.map(JSONText.string) ?? "null"),
            ("method", JSONText.string(request.method)),
            ("path", JSONText.string(path)),
            ("status", Int(status).map(String.init) ?? JSONText.string(status)),
            ("bytes", String(bytes)),
            ("ms", String(milliseconds)),
            ("cache", JSONText.string(cacheLayer)),
            ("ua", request.userAgent.map(JSONText.string) ?? "null"),
        ]
        if let reason { fields.append(("reason", JSONText.string(reason))) }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// `"text"` with quotes, backslashes and control characters escaped, or `"-"` for nil (CLF's empty field).
    private static func quoted(_ text: String?) -> String {
        "\"" + (text.map(escaped) ?? "-") + "\""
    }

    /// Quotes, backslashes and control characters as `\xHH`, as nginx writes them: a header cannot forge a field.
    private static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
        else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\"" || scalar == "\\" {
                output += "\\x" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 2)
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
