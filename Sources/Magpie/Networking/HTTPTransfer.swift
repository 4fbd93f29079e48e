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
    let configuration: ImageDownloader.Configuration
    let request: ImageRequest
    let timeout: Duration
    let redirectHandler: (any ImageDownloadRedirectHandler)?
    let validators: HTTPValidators?
    let onSend: @Sendable (ImageRequest) -> Void
    let onResponse: @Sendable (HTTPResponseInfo) -> Void
    let onProgress: @Sendable (DownloadProgress, _ final: Bool) -> Void

    /// Runs the attempt; the whole exchange (redirects and body included) must end within `timeout`.
    func run() async throws -> ImageDataResult {
        let url = request.url
        let timeout = timeout
        return try await withThrowingTaskGroup(of: ImageDataResult?.self) { group in
            group.addTask { try await exchange() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            // The first child to end decides: the exchange's result or error, or the timer (nil).
            guard let first = try await group.next(), let result = first else {
                throw MagpieError.requestFailed(reason: .timedOut(url, timeout: timeout))
            }
            return result
        }
    }

    private func exchange() async throws -> ImageDataResult {
        let started = ContinuousClock.now
        // A timeout beyond a year means "none"; adding it to now could overflow the deadline.
        let deadline = timeout > .seconds(365 * 86_400) ? NIODeadline.distantFuture : NIODeadline.now() + TimeAmount(saturating: timeout)
        var current = request
        var chain = [request.url]
        var metrics = DownloadMetrics()
        while true {
            onSend(current)
            let sent = ContinuousClock.now
            let response: HTTPClientResponse
            do {
                response = try await client.execute(makeClientRequest(current), deadline: deadline)
            } catch {
                throw TransportError.map(error, url: current.url, timeout: timeout)
            }
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
            // A 3xx that was not followed (no Location, or 300/305) has no image in it.
            guard configuration.acceptableStatusCodes.contains(info.statusCode), !(300..<400).contains(info.statusCode) else {
                await discard(response.body)
                throw MagpieError.responseFailed(reason: .badStatus(info))
            }
            if !configuration.acceptableContentTypes.accepts(info.contentType) {
                // Sniff the first chunk only: an HTML error page need not be read to the end.
                var iterator = response.body.makeAsyncIterator()
                let head = (try? await iterator.next()).flatMap { $0 }.map { Data($0.readableBytesView) } ?? Data()
                throw MagpieError.responseFailed(reason: .notAnImage(info, sniffed: ImageFormat(sniffing: head)))
            }
            let data = try await readBody(response.body, info: info)
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

    private func readBody(_ body: HTTPClientResponse.Body, info: HTTPResponseInfo) async throws -> Data {
        let limit = configuration.maximumResponseSize
        let declared = info.contentLength
        if let declared, declared > limit {
            throw MagpieError.responseFailed(reason: .tooLarge(info, limit: limit, declared: declared))
        }
        var data = Data()
        // Reserve what was declared, up to 4 MB: a lying Content-Length must not cost memory it never sends.
        data.reserveCapacity(min(declared ?? 64 * 1024, 4 * 1024 * 1024))
        do {
            for try await chunk in body {
                guard data.count + chunk.readableBytes <= limit else {
                    throw MagpieError.responseFailed(reason: .tooLarge(info, limit: limit, declared: declared))
                }
                chunk.withUnsafeReadableBytes { data.append($0.assumingMemoryBound(to: UInt8.self)) }
                onProgress(DownloadProgress(receivedBytes: data.count, expectedBytes: declared), false)
            }
        } catch let error as MagpieError {
            throw error
        } catch {
            // A connection closed before Content-Length is a truncation, whatever NIO calls it.
            if let declared, data.count < declared, !(error is CancellationError), !Task.isCancelled {
                throw MagpieError.responseFailed(reason: .truncated(info, expected: declared, received: data.count))
            }
            throw TransportError.map(error, url: info.url, timeout: timeout)
        }
        if let declared, data.count < declared {
            throw MagpieError.responseFailed(reason: .truncated(info, expected: declared, received: data.count))
        }
        onProgress(DownloadProgress(receivedBytes: data.count, expectedBytes: declared), true)
        return data
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

    private func makeClientRequest(_ request: ImageRequest) -> HTTPClientRequest {
        var clientRequest = HTTPClientRequest(url: request.url.absoluteString)
        clientRequest.method = HTTPMethod(rawValue: request.method)
        for field in sentHeaders(request) { clientRequest.headers.add(name: field.name, value: field.value) }
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
