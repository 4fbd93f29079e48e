import Foundation
import Testing

@testable import Magpie
@testable import MagpieCore

@Suite("HTTPResponseInfo: headers, validators, Retry-After")
struct HTTPResponseInfoTests {
    private func response(_ headers: [(String, String)]) -> HTTPResponseInfo {
        HTTPResponseInfo(url: URL(string: "http://example.com/a.png")!, statusCode: 200, headers: headers.map { HTTPHeaderField(name: $0.0, value: $0.1) })
    }

    @Test func headerLookupIsCaseInsensitive() {
        let info = response([("content-TYPE", "Image/PNG; charset=x"), ("Content-Length", " 42 ")])
        #expect(info[header: "Content-Type"] == "Image/PNG; charset=x")
        #expect(info.contentType == "image/png")
        #expect(info.contentLength == 42)
    }

    @Test func cacheControlMaxAgeAndNoCacheBecomeValidators() {
        #expect(response([("Cache-Control", "public, max-age=3600")]).validators.maxAge == 3600)
        #expect(response([("Cache-Control", "max-age=\"60\"")]).validators.maxAge == 60)
        #expect(response([("Cache-Control", "no-cache, max-age=3600")]).validators.maxAge == 0)
        #expect(response([("Cache-Control", "max-age=3600, no-store")]).validators.maxAge == 0)
        #expect(response([]).validators.maxAge == nil)
        let validators = response([("ETag", "\"abc\""), ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")]).validators
        #expect(validators.etag == "\"abc\"")
        #expect(validators.lastModified == "Wed, 21 Oct 2015 07:28:00 GMT")
    }

    @Test func retryAfterAcceptsSecondsAndAllThreeHTTPDateFormats() {
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(response([("Retry-After", "120")]).retryAfter(now: now) == .seconds(120))
        #expect(response([("Retry-After", "Wed, 21 Oct 2015 07:29:00 GMT")]).retryAfter(now: now) == .seconds(60))
        #expect(response([("Retry-After", "Wednesday, 21-Oct-15 07:30:00 GMT")]).retryAfter(now: now) == .seconds(120))
        #expect(response([("Retry-After", "Wed Oct 21 07:28:30 2015")]).retryAfter(now: now) == .seconds(30))
        #expect(response([("Retry-After", "Tue, 20 Oct 2015 07:28:00 GMT")]).retryAfter(now: now) == .zero)
        #expect(response([("Retry-After", "soon")]).retryAfter(now: now) == nil)
        // delta-seconds is digits only.
        #expect(response([("Retry-After", "+120")]).retryAfter(now: now) == nil)
        #expect(response([("Retry-After", "-5")]).retryAfter(now: now) == nil)
    }

    @Test func httpDateParsingRejectsMalformedDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 32 Nov 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
    }

    @Test func transientErrorsAreTimeoutsConnectionFailures5xxAnd429() {
        let url = URL(string: "http://example.com/")!
        let status = { (code: Int) in MagpieError.responseFailed(reason: .badStatus(HTTPResponseInfo(url: url, statusCode: code))) }
        #expect(status(503).isTransient && status(500).isTransient && status(429).isTransient && status(408).isTransient)
        #expect(!status(404).isTransient && !status(403).isTransient)
        #expect(MagpieError.requestFailed(reason: .timedOut(url, timeout: .seconds(1))).isTransient)
        #expect(MagpieError.requestFailed(reason: .connectionFailed(url, message: "refused")).isTransient)
        #expect(!MagpieError.requestFailed(reason: .cancelled(url)).isTransient)
        #expect(!MagpieError.requestFailed(reason: .redirectLoop(url, chain: [url])).isTransient)
    }
}

import AsyncHTTPClient
import NIOCore

@Suite("Hostile headers and redirects")
struct HostileResponseTests {
    private func response(_ headers: [(String, String)], status: Int = 503) -> HTTPResponseInfo {
        HTTPResponseInfo(url: URL(string: "http://example.com/a.png")!, statusCode: status, headers: headers.map { HTTPHeaderField(name: $0.0, value: $0.1) })
    }

    @Test func absurdRetryAfterValuesAreRejectedOrClampedWithoutTrapping() {
        #expect(response([("Retry-After", "Sun, 06 Nov 999999999999999 08:49:37 GMT")]).retryAfter() == nil)
        #expect(response([("Retry-After", "Sun, 06 Nov 999999999 08:49:37 GMT")]).retryAfter() == nil)
        #expect(response([("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT")]).retryAfter() == .seconds(86_400))
        // Beyond Int64 is still "not soon": clamped to a day like any delay past one.
        #expect(response([("Retry-After", "99999999999999999999")]).retryAfter() == .seconds(86_400))
        #expect(response([("Retry-After", "999999999999")]).retryAfter() == .seconds(86_400))
    }

    @Test func hugeDurationsSaturateInsteadOfTrapping() {
        #expect(TimeAmount(saturating: .seconds(Int64.max)) == .nanoseconds(.max))
        #expect(TimeAmount(saturating: .milliseconds(1500)) == .milliseconds(1500))
    }

    @Test func crossOriginRedirectKeepsOnlyContentNegotiationHeaders() async throws {
        let transfer = HTTPTransfer(
            client: HTTPClient.shared, networkGuard: nil, configuration: .init(), request: ImageRequest(url: URL(string: "http://a.example/x.png")!),
            timeout: .seconds(1), deadlines: DeadlineWatch(), redirectHandler: nil, validators: nil, spoolDirectory: nil, onSend: { _ in }, onResponse: { _ in },
            onProgress: { _, _ in })
        var request = ImageRequest(url: URL(string: "http://a.example/x.png")!)
        for (name, value) in [("X-Api-Key", "secret"), ("Authorization", "Bearer t"), ("Proxy-Authorization", "Basic p"), ("Accept", "image/*")] {
            request.setValue(value, forHeader: name)
        }
        let chain = [request.url]
        let sameOrigin = try await transfer.redirect(from: response([("Location", "/y.png")], status: 302), request: request, chain: chain)
        #expect(sameOrigin?.value(forHeader: "X-Api-Key") == "secret")
        let elsewhere = try await transfer.redirect(from: response([("Location", "http://b.example/y.png")], status: 302), request: request, chain: chain)
        #expect(elsewhere?.url.host == "b.example")
        #expect(elsewhere?.headers.map(\.name) == ["Accept"])
    }
}
