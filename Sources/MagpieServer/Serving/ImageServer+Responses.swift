import Logging
import Magpie
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turning results and failures into HTTP answers: caching headers, conditional requests, `HEAD`, the access log.
extension ImageServer {
    func imageResponse(_ image: ServedImage, layer: String, parsed: ParsedServeRequest, request: ImageServerRequest) -> ImageServerResponse {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", image.format.mimeType),
            ("Content-Length", String(image.data.count)),
            ("Cache-Control", image.isProvisional ? "public, max-age=\(configuration.errorMaxAge.components.seconds)"
                : thumborCacheControl(parsed) ?? (parsed.request.options.expires == nil ? resultCacheControl : expiringCacheControl(parsed))),
            ("Content-Disposition", parsed.contentDisposition(format: image.format)),
        ]
        if configuration.sendsETag { headers.append(("ETag", image.etag)) }
        if let lastModified = image.lastModified { headers.append(("Last-Modified", lastModified)) }
        if image.variesOnAccept { headers.append(("Vary", "Accept")) }
        headers.append(("X-Magpie-Cache", layer))
        if Self.isNotModified(request, image: image) {
            // RFC 9110 §15.4.5: a 304 carries the validators and caching headers a 200 would, no body.
            return ImageServerResponse(
                status: 304, headers: headers.filter { $0.name != "Content-Type" && $0.name != "Content-Length" },
                body: Data(), cacheLayer: layer)
        }
        return ImageServerResponse(status: 200, headers: headers, body: request.method == "HEAD" ? Data() : image.data, cacheLayer: layer)
    }

    /// `Cache-Control` for a URL with imgproxy's `expires`: `max-age` no longer than the time left.
    private func expiringCacheControl(_ parsed: ParsedServeRequest) -> String {
        let left = max(0, (parsed.request.options.expires ?? 0) - Int(Date().timeIntervalSince1970))
        return "public, max-age=\(min(Int(configuration.maxAge.components.seconds), left))"
    }

    /// `If-None-Match` decides when present (weak comparison, `*` matches); `If-Modified-Since` only without it.
    static func isNotModified(_ request: ImageServerRequest, image: ServedImage) -> Bool {
        if let ifNoneMatch = request.ifNoneMatch {
            let tags = ifNoneMatch.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let ours = image.etag
            return tags.contains { tag in
                tag == "*" || tag == ours || (tag.hasPrefix("W/") && String(tag.dropFirst(2)) == ours)
            }
        }
        guard let since = request.ifModifiedSince.flatMap(HTTPDate.parse),
            let modified = image.lastModified.flatMap(HTTPDate.parse)
        else { return false }
        return modified <= since
    }

    func failureResponse(_ failure: ServerFailure, method: String) -> ImageServerResponse {
        let body = Data((failure.message + "\n").utf8)
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.count)),
        ]
        switch failure.status {
        case 404, 415, 422:
            // Permanent for this source as it is now: a CDN may keep the answer briefly, not for a year.
            headers.append(("Cache-Control", "public, max-age=\(configuration.errorMaxAge.components.seconds)"))
        case 429, 503:
            headers.append(("Cache-Control", "no-store"))
            headers.append(("Retry-After", "1"))
        default:
            headers.append(("Cache-Control", "no-store"))
        }
        return ImageServerResponse(status: failure.status, headers: headers, body: method == "HEAD" ? Data() : body, cacheLayer: "-")
    }

    /// `/SIGNATURE/rest` → `/…/rest`: signatures are credentials of a kind (a logged one can be replayed).
    static func elidingSignature(_ path: String) -> String {
        let trimmed = path.drop(while: { $0 == "/" })
        guard let slash = trimmed.firstIndex(of: "/") else { return "/…" }
        return "/…" + trimmed[slash...]
    }
}
