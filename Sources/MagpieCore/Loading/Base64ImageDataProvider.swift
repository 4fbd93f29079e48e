#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Image bytes given as base64 text, as found in JSON payloads and HTML.
/// Accepts the standard and the URL-safe alphabet, line breaks and other ASCII whitespace, and missing padding.
public struct Base64ImageDataProvider: ImageDataProvider {
    /// The base64 text, as given.
    public let base64String: String
    /// The key of the image in the caches.
    public let cacheKey: String

    /// A provider that decodes `base64String`, cached under `cacheKey`; the text is only checked when
    /// ``data()`` is called.
    ///
    /// - Parameters:
    ///   - base64String: The base64 text, without a `data:` prefix.
    ///   - cacheKey: The key in the caches.
    public init(base64String: String, cacheKey: String) {
        self.base64String = base64String
        self.cacheKey = cacheKey
    }

    /// The decoded bytes.
    ///
    /// - Throws: ``MagpieError/requestFailed(reason:)`` with
    ///   ``MagpieError/RequestFailureReason/dataProviderFailed(cacheKey:message:)`` when the text is not base64
    ///   (a character outside both alphabets, padding in the middle, or a length that cannot be base64).
    public func data() async throws -> Data {
        guard let data = Self.decode(base64String.utf8) else {
            throw MagpieError.requestFailed(reason: .dataProviderFailed(
                cacheKey: cacheKey, message: "invalid base64 (\(base64String.utf8.count) characters)"))
        }
        return data
    }

    /// Decodes standard or URL-safe base64, skipping ASCII whitespace and completing missing padding
    /// (``Base64Text/Rules/lenient``). Nil for any other character, for padding that is not at the end, or for a
    /// dangling sixth of a byte.
    static func decode(_ text: some Sequence<UInt8>) -> Data? {
        Base64Text.decode(text, .lenient).map { Data($0) }
    }
}
