#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where an image comes from: a URL downloaded over HTTP, or a provider that supplies the bytes itself.
public enum Source: Sendable {
    /// Downloaded from the resource's ``Resource/downloadURL`` and cached under its ``Resource/cacheKey``.
    case network(any Resource)
    /// Supplied by a data provider (local file, base64, `data:` URL, raw bytes).
    case provider(any ImageDataProvider)

    /// The key of the image in the caches: the resource's or the provider's `cacheKey`.
    public var cacheKey: String {
        switch self {
        case .network(let resource): resource.cacheKey
        case .provider(let provider): provider.cacheKey
        }
    }

    /// The URL that names a provider without a ``ImageDataProvider/contentURL`` in results and errors:
    /// `magpie-provider:` followed by its cache key, percent-encoded.
    ///
    /// - Parameter cacheKey: The provider's cache key.
    public static func providerURL(cacheKey: String) -> URL {
        // Letters, digits, "-" and "." stay; everything else is escaped.
        let encoded = PercentDecoding.encoded(cacheKey) { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7a) || byte == 0x2d || byte == 0x2e
        }
        return URL(string: "magpie-provider:" + encoded) ?? URL(string: "magpie-provider:provider")!
    }

    /// The download URL, or the provider's ``ImageDataProvider/contentURL`` (nil for providers without one).
    public var url: URL? {
        switch self {
        case .network(let resource): resource.downloadURL
        case .provider(let provider): provider.contentURL
        }
    }
}

extension Resource {
    /// The source that loads this resource: ``Source/provider(_:)`` for `file:` and `data:` URLs (a
    /// ``LocalFileImageDataProvider`` or ``DataURLImageDataProvider``, keeping a cache key the caller chose),
    /// ``Source/network(_:)`` otherwise.
    ///
    /// - Returns: The source; unsupported schemes still give ``Source/network(_:)`` and fail when downloaded.
    public func convertToSource() -> Source { convertToSourceAndKey().source }

    /// ``convertToSource()`` with the source's cache key when it comes free: a URL's key is its text, which finding the
    /// scheme has read already (reading it again cost 4 % of a manager memory hit); nil otherwise (ask the source).
    package func convertToSourceAndKey() -> (source: Source, cacheKey: String?) {
        // The common case first (this runs on every memory hit): the URL keeps its text, while `scheme` re-parses it
        // (a sixth of a manager memory hit, measured with perf). Any other spelling takes the general path below.
        // Bytes compared by hand: the generic `starts(with:)` over a UTF8View walked its iterator (4 % of a hit).
        var text = downloadURL.absoluteString
        let isHTTP = text.withUTF8 { b in
            guard b.count >= 5, b[0] == UInt8(ascii: "h"), b[1] == UInt8(ascii: "t"), b[2] == UInt8(ascii: "t"),
                b[3] == UInt8(ascii: "p")
            else { return false }
            return b[4] == UInt8(ascii: ":") || (b.count >= 6 && b[4] == UInt8(ascii: "s") && b[5] == UInt8(ascii: ":"))
        }
        // A URL is its own resource, keyed by its text (a comparison of type metadata, not a cast).
        if isHTTP { return (.network(self), Self.self == URL.self ? text : nil) }
        // A data URL's default key is its hash, not the URL text; only a key the caller chose carries over.
        let customKey = cacheKey == text ? nil : cacheKey
        if let provider = dataProvider(for: downloadURL, cacheKey: customKey) { return (.provider(provider), nil) }
        return (.network(self), nil)
    }
}

/// The provider that reads `url` without HTTP: a `LocalFileImageDataProvider` for `file:`,
/// a `DataURLImageDataProvider` for `data:`; nil for any other scheme.
package func dataProvider(for url: URL, cacheKey: String? = nil) -> (any ImageDataProvider)? {
    switch url.scheme?.lowercased() {
    case "file": LocalFileImageDataProvider(fileURL: url, cacheKey: cacheKey)
    case "data": DataURLImageDataProvider(url: url, cacheKey: cacheKey)
    default: nil
    }
}
