#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image inside an RFC 2397 `data:` URL: `data:[<mediatype>][;base64],<data>`.
/// The payload is percent-decoded, then base64-decoded when marked `;base64`.
public struct DataURLImageDataProvider: ImageDataProvider {
    /// The `data:` URL.
    public let url: URL
    /// The key of the image in the caches: by default `data-url:sha256:` and the hex SHA-256 of
    /// `url.absoluteString`, since the URL itself can be megabytes long.
    public let cacheKey: String

    /// A provider for `url`, cached under `cacheKey` or, when nil, under a hash of the URL.
    ///
    /// The URL is only parsed when ``data()`` is called.
    /// - Parameters:
    ///   - url: A `data:` URL.
    ///   - cacheKey: The key in the caches; nil (the default) for `data-url:sha256:` and the URL's hash.
    public init(url: URL, cacheKey: String? = nil) {
        self.url = url
        self.cacheKey = cacheKey ?? "data-url:sha256:" + lowercaseHex(SHA256Hash.digest(url.absoluteString.utf8))
    }

    /// The `data:` URL itself (``url``).
    public var contentURL: URL? { url }

    /// The media type the URL declares, lowercased and without parameters (`image/png`);
    /// nil when it declares none or is malformed.
    public var mediaType: String? { (try? Self.header(of: url.absoluteString))?.mediaType }

    /// The decoded payload: percent-decoded, then base64-decoded when the URL says `;base64`.
    /// A `#fragment` is not part of the payload.
    ///
    /// - Throws: ``MagpieError/requestFailed(reason:)`` with ``MagpieError/RequestFailureReason/invalidURL(_:)``
    ///   (quoting at most the first 64 characters) when the URL is not a well-formed `data:` URL
    ///   or its payload is not valid percent-encoding or base64.
    public func data() async throws -> Data {
        let text = url.absoluteString
        let header = try Self.header(of: text)
        var payload = text[header.payloadStart...]
        // The fragment is not part of the data (as in browsers).
        if let hash = payload.utf8.firstIndex(of: UInt8(ascii: "#")) { payload = payload[..<hash] }
        guard let bytes = PercentDecoding.strictBytes(payload) else { throw Self.malformed(text) }
        guard header.isBase64 else { return Data(bytes) }
        guard let data = Base64ImageDataProvider.decode(bytes) else { throw Self.malformed(text) }
        return data
    }

    private static func header(of text: String) throws -> (mediaType: String?, isBase64: Bool, payloadStart: String.Index) {
        guard text.utf8.count >= 5, text.prefix(5).lowercased() == "data:",
              let comma = text.utf8.firstIndex(of: UInt8(ascii: ",")) else { throw malformed(text) }
        let fields = text[text.utf8.index(text.startIndex, offsetBy: 5)..<comma]
            .split(separator: ";", omittingEmptySubsequences: false)
            .map { $0.lowercased() }
        // The first field is the media type (possibly empty); parameters such as charset are ignored.
        let isBase64 = fields.count > 1 && fields.last == "base64"
        let type = fields[0]
        if type.isEmpty { return (nil, isBase64, text.index(after: comma)) }
        let parts = type.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !type.contains(where: \.isWhitespace) else {
            throw malformed(text)
        }
        return (type, isBase64, text.index(after: comma))
    }

    /// The error for a malformed URL, quoting only its start: a data URL can be megabytes long.
    private static func malformed(_ text: String) -> MagpieError {
        let quoted = text.utf8.count > 64 ? "\(text.prefix(64))… (\(text.utf8.count) bytes)" : text
        return .requestFailed(reason: .invalidURL(quoted))
    }
}
