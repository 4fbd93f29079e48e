import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A verified, parsed request with the parts of its result key that no header changes, kept per path once a cache
/// answers it (``ImageServer/parsedRequests``) instead of worked out per request: the normalised options text is built
/// from every option and processor.
struct ParsedServeRequest: Sendable {
    let request: ServeRequest
    /// Source identity and normalised options, each followed by a newline; the format follows.
    let keyPrefix: String
    /// The whole result key when the URL fixes the format; nil for `auto`, whose key depends on `Accept`.
    let fixedFormatKey: String?
    /// `inline` or `attachment`, and the file name without its extension, for `Content-Disposition`.
    private let disposition: (kind: String, stem: String)

    /// The key parts of `request`, with the server's default qualities, watermark name and face detector (all decide
    /// the bytes).
    init(
        _ request: ServeRequest, defaultQuality: (ImageFormat) -> Int = ServeOptions.defaultQuality, watermarkName: String? = nil,
        detector: (any FocalPointDetecting)? = nil
    ) {
        self.request = request
        keyPrefix = request.source.cacheIdentity + "\n"
            + request.options.normalized(defaultQuality: defaultQuality, watermarkName: watermarkName, detector: detector) + "\n"
        switch request.options.format {
        case .fixed(let format): fixedFormatKey = keyPrefix + format.rawValue
        case .auto: fixedFormatKey = nil
        }
        let stem = request.options.filename ?? Self.stem(of: request.source)
        // A quote would end the value early: imgproxy writes it %22.
        disposition = (request.options.attachment ? "attachment" : "inline", stem.replacingOccurrences(of: "\"", with: "%22"))
    }

    /// Whether imgproxy's `expires` has passed.
    func hasExpired(now: Date = Date()) -> Bool {
        request.options.expires.map { $0 <= Int(now.timeIntervalSince1970) } ?? false
    }

    /// `inline; filename="photo.webp"`: the stem and the output format's extension, as imgproxy writes it.
    func contentDisposition(format: ImageFormat) -> String {
        "\(disposition.kind); filename=\"\(disposition.stem).\(format.fileExtension)\""
    }

    /// The last path segment of the source without its extension, percent-decoded; `image` when there is none.
    private static func stem(of source: ServeSource) -> String {
        let path: String
        switch source {
        case .remote(let url): path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        case .local(let local): path = local
        }
        let last = path.split(separator: "/").last.map { PercentDecoding.lenient($0) ?? String($0) } ?? ""
        let stem = last.lastIndex(of: ".").map { String(last[..<$0]) } ?? last
        return stem.isEmpty || stem.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) ? "image" : stem
    }
}
