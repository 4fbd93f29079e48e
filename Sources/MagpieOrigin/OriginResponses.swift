import Hummingbird
import MagpieCore

/// Routes whose responses are complete and well formed: assets, revalidation, HTML, status codes, redirects.
extension OriginRoutes {
    /// The asset with its validators, or 304 when the request's conditional headers match, or 404; a `Range: bytes=N-`
    /// gets a 206 with the rest (unless an `If-Range` no longer matches: then the whole asset), or 416 past the end.
    func assetResponse(name: String, request: Request, contentType: String? = nil, context: OriginRequestContext? = nil) -> Response {
        guard let asset = state.asset(named: name) else { return missingAsset(name) }
        if let failure = asset.failureStatus {
            return Self.htmlResponse(status: .init(code: failure), title: "Status \(failure)", state: state)
        }
        var headers = Self.validatorHeaders(of: asset)
        if Self.isNotModified(asset, request: request) {
            // No body: NIO also strips Content-Length from 304s, so the client sees headers only.
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = contentType ?? asset.contentType
        if let start = Self.rangeStart(request, asset: asset) {
            let total = asset.bytes.count
            guard start < total else {
                headers[.contentRange] = "bytes */\(total)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            headers[.contentRange] = "bytes \(start)-\(total - 1)/\(total)"
            return Response(status: .partialContent, headers: headers, body: countedBody(Array(asset.bytes[start...])))
        }
        if let cut = asset.cutAfter, let context {
            return endsEarly(asset, declaring: asset.bytes.count, sending: cut, context: context)
        }
        return Response(status: .ok, headers: headers, body: countedBody(asset.bytes))
    }

    /// N of `Range: bytes=N-` when the request may get a part: no `If-Range`, or one equal to the asset's ETag or
    /// Last-Modified. Other range forms are answered with the whole asset, as RFC 9110 allows.
    static func rangeStart(_ request: Request, asset: OriginAsset) -> Int? {
        guard let range = request.headers[.range], range.hasPrefix("bytes="), range.hasSuffix("-"),
            let start = Int(range.dropFirst(6).dropLast()), start >= 0
        else { return nil }
        if let ifRange = request.headers[.ifRange], ifRange != asset.etag, ifRange != asset.lastModified { return nil }
        return start
    }

    func statusResponse(code: String, request: Request) -> Response {
        guard let code = Int(code), (200...599).contains(code) else {
            return Self.htmlResponse(status: .badRequest, title: "Bad status code \(code)", state: state)
        }
        // 204 and 304 must not carry a body: NIO would put the bytes on the wire unframed and corrupt the connection.
        var response =
            code == 204 || code == 304
            ? Response(status: .init(code: code))
            : Self.htmlResponse(status: .init(code: code), title: "Status \(code)", state: state)
        if let retryAfter = request.uri.queryParameters["retryAfter"] {
            response.headers[.retryAfter] = String(retryAfter)
        }
        return response
    }

    /// Fails the first `failures` requests for this exact path and query, then serves the asset.
    func flakyResponse(name: String, request: Request) -> Response {
        let url = request.uri.path + (request.uri.query.map { "?\($0)" } ?? "")
        let attempt = state.nextAttempt(url: url)
        let failures = Self.intParameter("failures", in: request, default: 1) ?? 1
        guard attempt > failures else {
            return statusResponse(code: String(request.uri.queryParameters["code"] ?? "503"), request: request)
        }
        return assetResponse(name: name, request: request)
    }

    /// `/redirect/N/NAME` redirects to `/redirect/N-1/NAME` (keeping the query); `/redirect/0/NAME` serves the asset.
    /// Odd N send a relative Location and even N an absolute one, so clients must resolve both.
    func redirectResponse(count: String, name: String, request: Request) -> Response {
        guard let count = Int(count), count >= 0 else {
            return Self.htmlResponse(status: .badRequest, title: "Bad redirect count", state: state)
        }
        guard count > 0 else { return assetResponse(name: name, request: request) }
        let status: HTTPResponse.Status
        switch request.uri.queryParameters["status"] {
        case "301": status = .movedPermanently
        case "303": status = .seeOther
        case "307": status = .temporaryRedirect
        case "308": status = .permanentRedirect
        default: status = .found
        }
        let target = "/redirect/\(count - 1)/\(name)" + (request.uri.query.map { "?\($0)" } ?? "")
        return redirect(status: status, to: target, absolute: count.isMultiple(of: 2))
    }

    /// `/to?location=URL&status=302` redirects to `location` as given (any host, any scheme); without one, a 400.
    func redirectAnywhere(request: Request) -> Response {
        guard let location = request.uri.queryParameters["location"], !location.isEmpty else {
            return Self.htmlResponse(status: .badRequest, title: "No location", state: state)
        }
        let status: HTTPResponse.Status = request.uri.queryParameters["status"] == "307" ? .temporaryRedirect : .found
        return Response(status: status, headers: [.location: String(location)])
    }

    /// `/loop/a` and `/loop/b` redirect to each other forever (a relative and an absolute Location).
    func loopResponse(side: String) -> Response {
        switch side {
        case "a": return redirect(status: .found, to: "/loop/b", absolute: false)
        case "b": return redirect(status: .found, to: "/loop/a", absolute: true)
        default: return Self.htmlResponse(status: .notFound, title: "404 Not Found", state: state)
        }
    }

    /// A small HTML page; what a misconfigured CDN or captive portal sends instead of an image.
    static func htmlResponse(status: HTTPResponse.Status, title: String, state: OriginState) -> Response {
        let page = "<!DOCTYPE html><html><head><title>\(title)</title></head><body><h1>\(title)</h1></body></html>\n"
        var response = Response(status: status, body: countedBody(Array(page.utf8), state: state))
        response.headers[.contentType] = "text/html; charset=utf-8"
        return response
    }

    // MARK: Helpers

    func missingAsset(_ name: String) -> Response {
        Self.htmlResponse(status: .notFound, title: "No asset named \(name)", state: state)
    }

    func countedBody(_ bytes: [UInt8]) -> ResponseBody {
        Self.countedBody(bytes, state: state)
    }

    /// A fixed body that adds its size to `bodyBytesSent` only once it was handed to the connection.
    static func countedBody(_ bytes: [UInt8], state: OriginState) -> ResponseBody {
        ResponseBody(contentLength: bytes.count) { writer in
            try await writer.write(ByteBuffer(bytes: bytes))
            state.addBodyBytes(bytes.count)
            try await writer.finish(nil)
        }
    }

    private func redirect(status: HTTPResponse.Status, to target: String, absolute: Bool) -> Response {
        let location = absolute ? "http://127.0.0.1:\(state.port)\(target)" : target
        return Response(status: status, headers: [.location: location])
    }

    /// ETag, Last-Modified and Cache-Control: sent with both 200 and 304 responses.
    static func validatorHeaders(of asset: OriginAsset) -> HTTPFields {
        var headers = HTTPFields()
        if let etag = asset.etag { headers[.eTag] = etag }
        if let lastModified = asset.lastModified { headers[.lastModified] = lastModified }
        if let maxAge = asset.maxAge { headers[.cacheControl] = "max-age=\(maxAge)" }
        for (name, value) in asset.headers {
            if let field = HTTPFields.Element.Name(name) { headers[field] = value }
        }
        return headers
    }

    /// RFC 9110 §13.2.2 order: If-None-Match decides when present (weak comparison, `*` matches anything);
    /// only without it does If-Modified-Since apply (equal strings, or a date not earlier than Last-Modified).
    static func isNotModified(_ asset: OriginAsset, request: Request) -> Bool {
        if let ifNoneMatch = request.headers[values: .ifNoneMatch].joined(separator: ",").nilIfEmpty {
            let candidates = ifNoneMatch.split(separator: ",").map { $0.trimmingSpaces }
            if candidates.contains("*") { return true }
            guard let etag = asset.etag else { return false }
            return candidates.contains { weakTag($0) == weakTag(etag[...]) }
        }
        guard let ifModifiedSince = request.headers[.ifModifiedSince], let lastModified = asset.lastModified else {
            return false
        }
        if ifModifiedSince == lastModified { return true }
        guard let since = HTTPDate.parse(ifModifiedSince), let modified = HTTPDate.parse(lastModified) else { return false }
        return since >= modified
    }

    /// The opaque part of an entity tag, so `W/"x"` and `"x"` compare equal (weak comparison).
    private static func weakTag(_ tag: Substring) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
