import Crypto
import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One encoded result as it is sent and cached: the bytes, their format, a strong ETag of them, and the source's
/// `Last-Modified` when it had one.
struct ServedImage: CacheCostCalculable {
    let data: Data
    let format: ImageFormat
    /// A quoted strong entity tag: the first 128 bits of the SHA-256 of ``data``, in hex.
    let etag: String
    /// The source's `Last-Modified`, as an IMF-fixdate.
    let lastModified: String?
    /// The response must carry `Vary: Accept` (the format was negotiated).
    let variesOnAccept: Bool
    /// A fallback made because a step could not do its best in time (a smart crop without its face detection): not
    /// kept, and cacheable downstream only for ``ImageServerConfiguration/errorMaxAge``.
    var isProvisional = false

    /// What it counts against the memory layer's budget: its bytes.
    var cacheCost: Int { data.count }

    init(data: Data, format: ImageFormat, lastModified: String?, variesOnAccept: Bool) {
        self.data = data
        self.format = format
        self.etag = Self.entityTag(of: data)
        self.lastModified = lastModified
        self.variesOnAccept = variesOnAccept
    }

    /// Read back from the result cache, whose validators hold what was written with the bytes.
    init(data: Data, validators: HTTPValidators) {
        self.data = data
        self.format = ImageFormat(sniffing: data)
        self.etag = validators.etag ?? Self.entityTag(of: data)
        self.lastModified = validators.lastModified
        self.variesOnAccept = validators.vary != nil
    }

    /// What the result cache stores beside the bytes.
    var validators: HTTPValidators {
        var validators = HTTPValidators()
        validators.etag = etag
        validators.lastModified = lastModified
        validators.vary = variesOnAccept ? "Accept" : nil
        validators.contentType = format.mimeType
        return validators
    }

    static func entityTag(of data: Data) -> String {
        let digest = SHA256.hash(data: data)
        return "\"" + digest.withUnsafeBytes { lowercaseHex($0.prefix(16)) } + "\""
    }
}
