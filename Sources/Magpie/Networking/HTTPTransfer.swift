import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// One attempt at a download over HTTP: send, follow redirects (through the handler, with the
/// count capped and loops refused), validate the response, and stream the body into memory
/// within the size limit, all under one deadline. Retries are the caller's business.
struct HTTPTransfer: Sendable {
    let client: HTTPClient
    /// Checks each hop before it is sent and gives the client pinned to the checked address; nil for no checks.
    let networkGuard: NetworkGuard?
    let configuration: ImageDownloader.Configuration
    let request: ImageRequest
    let timeout: Duration
    /// The downloader's timer for every attempt's `timeout`.
    let deadlines: DeadlineWatch
    let redirectHandler: (any ImageDownloadRedirectHandler)?
    let validators: HTTPValidators?
    /// Where bodies past the configuration's `bodyFileThreshold` are written; nil keeps every body in memory.
    let spoolDirectory: String?
    let onSend: @Sendable (ImageRequest) -> Void
    let onResponse: @Sendable (HTTPResponseInfo) -> Void
    let onProgress: @Sendable (DownloadProgress, _ final: Bool) -> Void
    /// Called once a body goes to a file: `resumed` when it continues an interrupted one.
    var onSpool: @Sendable (_ resumed: Bool) -> Void = { _ in }

    /// Runs the attempt; the whole exchange (redirects and body included) must end within `timeout`.
    func run() async throws -> ImageDataResult {
        guard let result = try await deadlines.run(within: timeout, exchange) else {
            throw MagpieError.requestFailed(reason: .timedOut(request.url, timeout: timeout))
        }
        return result
    }

    private func exchange() async throws -> ImageDataResult {
        // An earlier attempt's interrupted body, when there is one: asked for from where it stopped. Given back
        // (kept for the next attempt) unless the body reader takes it over.
        var resume = spoolDirectory.flatMap { BodySpool.claimResumable(in: $0, for: request) }
        do {
            let result = try await exchange(resume: &resume)
            // Not used (a 304, say): still there for a later attempt.
            if let resume { resume.spool.keep(resume.resumable, name: BodySpool.name(for: request)) }
            return result
        } catch {
            if let resume { resume.spool.keep(resume.resumable, name: BodySpool.name(for: request)) }
            throw error
        }
    }

    private func exchange(resume: inout (spool: BodySpool, resumable: BodySpool.Resumable)?) async throws -> ImageDataResult {
        let started = ContinuousClock.now
        // A timeout beyond a year means "none"; adding it to now could overflow the deadline.
        let deadline = timeout > .seconds(365 * 86_400) ? NIODeadline.distantFuture : NIODeadline.now() + TimeAmount(saturating: timeout)
        var current = request
        var chain = [request.url]
        var metrics = DownloadMetrics()
        while true {
            // Every hop (the first, each redirect, whatever the redirect handler chose) is checked before it is sent;
            // the lease holds its pinned client until the hop's body is read.
            let route = try await networkGuard?.route(for: current.url)
            onSend(current)
            let sent = ContinuousClock.now
            let (response, lease) = try await send(current, route: route, resumingFrom: resume, deadline: deadline)
            defer { networkGuard?.release(lease) }
            metrics.timeToFirstByte = ContinuousClock.now - sent
            let info = HTTPResponseInfo(
                url: current.url, statusCode: Int(response.status.code),
                headers: response.headers.map { HTTPHeaderField(name: $0.name, value: $0.value) })
            onResponse(info)

            if let next = try await redirect(from: info, request: current, chain: chain) {
                await discard(response.body)
                chain.append(next.url)
                metrics.redirectCount += 1
                current = next
                continue
            }
            if info.statusCode == 304, validators != nil {
                await discard(response.body)
                metrics.total = ContinuousClock.now - started
                var result = ImageDataResult(data: Data(), url: request.url, response: info, notModified: true, metrics: metrics)
                result.requestHeaders = sentHeaders(current)
                return result
            }
            // A range the origin cannot serve (the body shrank, say): start over without it.
            if info.statusCode == 416, let claimed = resume {
                await discard(response.body)
                claimed.spool.discard()
                resume = nil
                continue
            }
            // The rest of the interrupted body, when the origin sends exactly the part asked for; anything else
            // (a 200, or a range that does not start where ours stopped) replaces it.
            var appendingTo: BodySpool?
            if let claimed = resume {
                resume = nil
                if info.statusCode == 206, Self.contentRangeStart(info) == claimed.spool.size {
                    appendingTo = claimed.spool
                } else {
                    claimed.spool.discard()
                }
            }
            // A 3xx that was not followed (no Location, or 300/305) has no image in it; a 206 only answers a range we asked for.
            guard configuration.acceptableStatusCodes.contains(info.statusCode), !(300..<400).contains(info.statusCode),
                info.statusCode != 206 || appendingTo != nil
            else {
                appendingTo?.discard()
                await discard(response.body)
                throw MagpieError.responseFailed(reason: .badStatus(info))
            }
            if !configuration.acceptableContentTypes.accepts(info.contentType) {
                appendingTo?.discard()
                // Sniff the first chunk only: an HTML error page need not be read to the end.
                var iterator = response.body.makeAsyncIterator()
                let head = (try? await iterator.next()).flatMap { $0 }.map { Data($0.readableBytesView) } ?? Data()
                throw MagpieError.responseFailed(reason: .notAnImage(info, sniffed: ImageFormat(sniffing: head)))
            }
            let data = try await readBody(response.body, info: info, appendingTo: appendingTo)
            metrics.bytesReceived = data.count
            metrics.total = ContinuousClock.now - started
            guard !data.isEmpty else { throw MagpieError.responseFailed(reason: .emptyBody(info)) }
            let format = ImageFormat(sniffing: data)
            guard format != .unknown else { throw MagpieError.responseFailed(reason: .notAnImage(info, sniffed: format)) }
            var result = ImageDataResult(data: data, url: request.url, response: info, notModified: false, metrics: metrics)
            result.requestHeaders = sentHeaders(current)
            return result
        }
    }

    /// The next request when `info` is a redirect to follow; nil when it is not a redirect.
    func redirect(from info: HTTPResponseInfo, request: ImageRequest, chain: [URL]) async throws -> ImageRequest? {
        guard [301, 302, 303, 307, 308].contains(info.statusCode), let location = info[header: "Location"] else { return nil }
        guard let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            throw MagpieError.requestFailed(reason: .redirectRefused(chain[0], location: URL(string: location) ?? request.url))
        }
        if chain.contains(target) {
            throw MagpieError.requestFailed(reason: .redirectLoop(chain[0], chain: chain + [target]))
        }
        if chain.count > configuration.maximumRedirects {
            throw MagpieError.requestFailed(reason: .tooManyRedirects(chain[0], chain: chain + [target]))
        }
        var next = request
        next.url = target
        // 303 (and, as browsers do, 301/302 of a non-GET) turn into a GET.
        if info.statusCode == 303 || ([301, 302].contains(info.statusCode) && request.method != "HEAD") { next.method = "GET" }
        // Credentials never follow a redirect to another origin, whatever header a modifier put them in:
        // only content-negotiation headers cross.
        if target.host?.lowercased() != request.url.host?.lowercased() || target.port != request.url.port || target.scheme != request.url.scheme {
            let crossing = ["accept", "accept-language", "user-agent"]
            next.headers.removeAll { header in !crossing.contains { header.name.equalsIgnoringASCIICase($0) } }
        }
        guard let handler = redirectHandler else { return next }
        guard let chosen = await handler.handleHTTPRedirection(response: info, newRequest: next) else {
            throw MagpieError.requestFailed(reason: .redirectRefused(chain[0], location: target))
        }
        return chosen
    }

    /// The body, within the size limit: in memory, or past the spool threshold in a file (continuing `appendingTo`, the
    /// interrupted body a 206 completes). A body cut short is kept for resuming when the response named a validator.
    private func readBody(_ body: HTTPClientResponse.Body, info: HTTPResponseInfo, appendingTo: BodySpool?) async throws -> Data {
        let limit = configuration.maximumResponseSize
        let offset = appendingTo?.size ?? 0
        let declared = info.contentLength
        // The whole body's length: a 206's Content-Length counts only the rest; without one, its Content-Range's total.
        let expected = declared.map { $0 + offset } ?? (appendingTo == nil ? nil : Self.contentRangeTotal(info))
        if let expected, expected > limit {
            appendingTo?.discard()
            throw MagpieError.responseFailed(reason: .tooLarge(info, limit: limit, declared: expected))
        }
        let threshold = spoolDirectory == nil ? nil : configuration.bodyFileThreshold
        var spool = appendingTo
        if spool != nil { onSpool(true) }
        if spool == nil, let threshold, let spoolDirectory, let expected, expected > threshold {
            spool = try BodySpool.create(in: spoolDirectory, for: request.url)
            onSpool(false)
        }
        var data = Data()
        // Reserve what was declared, up to 4 MB: a lying Content-Length must not cost memory it never sends.
        if spool == nil { data.reserveCapacity(min(declared ?? 64 * 1024, 4 * 1024 * 1024)) }
        var received: Int { spool?.size ?? data.count }
        do {
            for try await chunk in body {
                guard received + chunk.readableBytes <= limit else {
                    throw MagpieError.responseFailed(reason: .tooLarge(info, limit: limit, declared: expected))
                }
                if spool == nil, let threshold, let spoolDirectory, data.count + chunk.readableBytes > threshold {
                    // Unknown length, and past the threshold: the rest goes to a file, and what came so far with it.
                    let created = try BodySpool.create(in: spoolDirectory, for: request.url)
                    try data.withUnsafeBytes { try created.append($0) }
                    data = Data()
                    spool = created
                    onSpool(false)
                }
                if let spool {
                    try chunk.withUnsafeReadableBytes { try spool.append($0) }
                } else {
                    chunk.withUnsafeReadableBytes { data.append($0.assumingMemoryBound(to: UInt8.self)) }
                }
                onProgress(DownloadProgress(receivedBytes: received, expectedBytes: expected), false)
            }
        } catch let error as MagpieError {
            // Over the limit or unwritable: nothing worth resuming.
            spool?.discard()
            throw error
        } catch {
            spool?.keep(Self.resumable(info, url: request.url, total: expected), name: BodySpool.name(for: request))
            // A connection closed before Content-Length is a truncation, whatever NIO calls it.
            if let expected, received < expected, !(error is CancellationError), !Task.isCancelled {
                throw MagpieError.responseFailed(reason: .truncated(info, expected: expected, received: received))
            }
            throw TransportError.map(error, url: info.url, timeout: timeout)
        }
        if let expected, received < expected {
            spool?.keep(Self.resumable(info, url: request.url, total: expected), name: BodySpool.name(for: request))
            throw MagpieError.responseFailed(reason: .truncated(info, expected: expected, received: received))
        }
        if let spool { data = try spool.finish() }
        onProgress(DownloadProgress(receivedBytes: data.count, expectedBytes: expected), true)
        return data
    }

    /// What resuming `info`'s body needs: its strong `ETag` (a weak one may not be used in `If-Range`), else its
    /// `Last-Modified`; nil when it has neither (such a body cannot be resumed safely).
    static func resumable(_ info: HTTPResponseInfo, url: URL, total: Int?) -> BodySpool.Resumable? {
        if let etag = info[header: "ETag"], !etag.hasPrefix("W/") {
            return BodySpool.Resumable(url: url.absoluteString, validator: etag, total: total)
        }
        guard let lastModified = info[header: "Last-Modified"] else { return nil }
        return BodySpool.Resumable(url: url.absoluteString, validator: lastModified, total: total)
    }

    /// The first byte position of a 206's `Content-Range: bytes FIRST-LAST/TOTAL`; nil when absent or malformed.
    static func contentRangeStart(_ info: HTTPResponseInfo) -> Int? {
        guard let parts = contentRangeParts(info), let dash = parts.range.firstIndex(of: "-") else { return nil }
        return Int(parts.range[..<dash])
    }

    /// TOTAL of a 206's `Content-Range: bytes FIRST-LAST/TOTAL`; nil when absent, `*` or malformed.
    static func contentRangeTotal(_ info: HTTPResponseInfo) -> Int? {
        contentRangeParts(info).flatMap { Int($0.total) }
    }

    private static func contentRangeParts(_ info: HTTPResponseInfo) -> (range: Substring, total: Substring)? {
        guard let value = info[header: "Content-Range"]?.trimmingASCIIWhitespace, value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        return (parts[0], parts[1])
    }

    /// Reads and drops a small body so the connection can be reused; a large one is abandoned
    /// (dropping the stream closes the connection, cheaper than reading megabytes of nothing).
    private func discard(_ body: HTTPClientResponse.Body) async {
        var remaining = 64 * 1024
        do {
            for try await chunk in body {
                remaining -= chunk.readableBytes
                if remaining < 0 { return }
            }
        } catch {}
    }

    /// The `Accept` sent when no modifier sets one.
    static let defaultAccept = "image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8,*/*;q=0.5"

    /// The request's headers plus the defaults the downloader adds (`User-Agent`, `Accept`), without conditional headers.
    static func sentHeaders(_ request: ImageRequest, userAgent: String) -> [HTTPHeaderField] {
        var headers = request.headers
        if !headers.contains(where: { $0.name.equalsIgnoringASCIICase("User-Agent") }) {
            headers.append(HTTPHeaderField(name: "User-Agent", value: userAgent))
        }
        if !headers.contains(where: { $0.name.equalsIgnoringASCIICase("Accept") }) {
            headers.append(HTTPHeaderField(name: "Accept", value: defaultAccept))
        }
        return headers
    }

    private func sentHeaders(_ request: ImageRequest) -> [HTTPHeaderField] {
        Self.sentHeaders(request, userAgent: configuration.userAgent)
    }

    /// Sends `request` and returns the response head with the pinned client holding its connection (nil when the hop
    /// has no route: no policy, or an IP literal).
    ///
    /// A route's addresses are tried in order while connecting fails (refused, unreachable, not made within the
    /// connect timeout), as AsyncHTTPClient tries a name's addresses when it resolves the name itself: a host whose
    /// first address is down is still reached. Only connecting is retried: nothing was sent then, so the origin sees
    /// the request once.
    private func send(
        _ request: ImageRequest, route: NetworkGuard.Route?, resumingFrom resume: (spool: BodySpool, resumable: BodySpool.Resumable)?,
        deadline: NIODeadline
    ) async throws -> (HTTPClientResponse, PinnedClientPool.Lease?) {
        guard let route, let networkGuard else {
            do {
                return (try await client.execute(makeClientRequest(request, resumingFrom: resume), deadline: deadline), nil)
            } catch {
                throw TransportError.map(error, url: request.url, timeout: timeout)
            }
        }
        var next = 0
        while true {
            let lease = try networkGuard.lease(route, address: route.addresses[next])
            do {
                return (try await lease.client.execute(makeClientRequest(request, resumingFrom: resume), deadline: deadline), lease)
            } catch {
                networkGuard.release(lease)
                next += 1
                guard next < route.addresses.count, TransportError.isConnectFailure(error), !Task.isCancelled,
                    NIODeadline.now() < deadline
                else { throw TransportError.map(error, url: request.url, timeout: timeout) }
            }
        }
    }

    private func makeClientRequest(
        _ request: ImageRequest, resumingFrom resume: (spool: BodySpool, resumable: BodySpool.Resumable)? = nil
    ) -> HTTPClientRequest {
        var clientRequest = HTTPClientRequest(url: request.url.absoluteString)
        clientRequest.method = HTTPMethod(rawValue: request.method)
        for field in sentHeaders(request) { clientRequest.headers.add(name: field.name, value: field.value) }
        if let resume {
            // The rest, only if it is still the same body; otherwise the origin sends all of it (200).
            clientRequest.headers.replaceOrAdd(name: "Range", value: "bytes=\(resume.spool.size)-")
            clientRequest.headers.replaceOrAdd(name: "If-Range", value: resume.resumable.validator)
        }
        if let validators {
            if let etag = validators.etag { clientRequest.headers.replaceOrAdd(name: "If-None-Match", value: etag) }
            if let lastModified = validators.lastModified { clientRequest.headers.replaceOrAdd(name: "If-Modified-Since", value: lastModified) }
        }
        if let host = request.url.host?.lowercased(), configuration.trustedHosts.contains(host) {
            var tls = configuration.tlsConfiguration ?? .makeClientConfiguration()
            tls.certificateVerification = .none
            clientRequest.tlsConfiguration = tls
        }
        return clientRequest
    }
}
