import AsyncHTTPClient
import Foundation
import NIOCore
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

/// A resolver with scripted answers: call N gets `answers[N]` (the last one once they run out).
final class ScriptedResolver: HostResolving {
    private let answers: [[IPAddress]]
    private let asked = Mutex<[String]>([])

    init(_ answers: [[String]]) { self.answers = answers.map { $0.map { IPAddress($0)! } } }

    func addresses(for host: String, port: Int) async throws -> [IPAddress] {
        let call = asked.withLock { asked in
            asked.append(host)
            return asked.count - 1
        }
        return answers[min(call, answers.count - 1)]
    }

    /// The hosts asked for, in order.
    var hosts: [String] { asked.withLock { $0 } }
}

@Suite("NetworkAccessPolicy: SSRF guard on every hop, pinned to the checked address")
struct NetworkAccessPolicyTests {
    /// Runs `body` with an origin and a downloader guarded by `policy`; both are stopped even when `body` throws.
    private func withGuardedOrigin(
        _ policy: (ImageOrigin) -> NetworkAccessPolicy, configure: (inout ImageDownloader.Configuration) -> Void = { _ in },
        _ body: (ImageOrigin, ImageDownloader) async throws -> Void
    ) async throws {
        let origin = try await OriginFixture.start()
        var configuration = ImageDownloader.Configuration()
        configuration.networkAccessPolicy = policy(origin)
        configure(&configuration)
        let downloader = ImageDownloader(name: "ssrf", configuration: configuration)
        do {
            try await body(origin, downloader)
        } catch {
            try? await downloader.shutdown()
            await origin.stop()
            throw error
        }
        try await downloader.shutdown()
        await origin.stop()
    }

    /// The refused URL and reason when `error` is a network access refusal.
    private func refusal(_ error: MagpieError?) -> (url: URL, reason: String)? {
        guard case .requestFailed(.networkAccessRefused(let url, let reason))? = error else { return nil }
        return (url, reason)
    }

    private static let loopback = [IPNetwork("127.0.0.0/8")!]

    @Test func loopbackIsRefusedByAddressAndByNameBeforeAnythingIsSent() async throws {
        try await withGuardedOrigin({ _ in NetworkAccessPolicy() }) { origin, downloader in
            let port = origin.port
            for text in ["http://127.0.0.1:\(port)/img/pic.png", "http://localhost:\(port)/img/pic.png",
                         "http://127.1:\(port)/img/pic.png", "http://[::1]:\(port)/img/pic.png",
                         "http://[::ffff:127.0.0.1]:\(port)/img/pic.png", "http://0.0.0.0:\(port)/img/pic.png"] {
                let url = try #require(URL(string: text))
                let error = await magpieError { try await downloader.downloadData(with: url) }
                let refused = refusal(error)
                #expect(refused?.url == url, "\(text): \(String(describing: error))")
                #expect(refused.map { $0.reason.contains("loopback") || $0.reason.contains("unspecified") } == true)
                #expect(error?.isTransient == false)
            }
            #expect(origin.totalRequests == 0)
            #expect(downloader.statistics.requestsSent == 0)
        }
    }

    @Test func metadataPrivateAndCGNATAddressesAreRefusedWithoutAConnection() async throws {
        try await withGuardedOrigin({ _ in NetworkAccessPolicy() }) { _, downloader in
            for (text, kind) in [("http://169.254.169.254/latest/meta-data/", "link-local"), ("http://10.0.0.1/a.png", "private"),
                                 ("http://100.64.0.1/a.png", "CGNAT"), ("http://[fd00::1]/a.png", "private"),
                                 ("http://224.0.0.1/a.png", "multicast")] {
                let url = try #require(URL(string: text))
                let error = await magpieError { try await downloader.downloadData(with: url) }
                #expect(refusal(error)?.reason.hasSuffix("is \(kind)") == true, "\(text): \(String(describing: error))")
            }
        }
    }

    @Test func anAllowedNetworkLetsItsAddressesThrough() async throws {
        try await withGuardedOrigin({ _ in NetworkAccessPolicy(allowedNetworks: Self.loopback) }) { origin, downloader in
            let byAddress = try await downloader.downloadData(with: URL(string: origin.url("/img/pic.png"))!)
            #expect(byAddress.data == OriginFixture.png)
            let byName = try await downloader.downloadImage(with: URL(string: "http://localhost:\(origin.port)/img/photo.jpg")!)
            #expect(byName.originalData == OriginFixture.jpeg)
            #expect(origin.totalRequests == 2)
        }
    }

    @Test func aRedirectToARefusedAddressIsRefusedBeforeItIsFollowed() async throws {
        let allowed = [IPNetwork("127.0.0.1/32")!]
        try await withGuardedOrigin({ _ in NetworkAccessPolicy(allowedNetworks: allowed) }) { origin, downloader in
            for target in ["http://127.0.0.2:\(origin.port)/img/pic.png", "http://10.0.0.1/x.png",
                           "http://169.254.169.254/latest/meta-data/", "http://[::ffff:7f00:2]:\(origin.port)/img/pic.png"] {
                let url = URL(string: origin.url("/to?location=\(target)"))!
                let error = await magpieError { try await downloader.downloadData(with: url) }
                #expect(refusal(error)?.url.absoluteString == target, "\(target): \(String(describing: error))")
            }
            #expect(origin.requestCount(path: "/to") == 4)
            #expect(origin.requestCount(path: "/img/pic.png") == 0)
        }
    }

    @Test func aRedirectOrRequestOutsideTheAllowedSourcesIsRefused() async throws {
        try await withGuardedOrigin({ origin in
            NetworkAccessPolicy(allowedNetworks: Self.loopback, allowedSourcePrefixes: [origin.url("/to"), origin.url("/img/photo")])
        }) { origin, downloader in
            let outside = URL(string: origin.url("/img/pic.png"))!
            let redirected = await magpieError {
                try await downloader.downloadData(with: URL(string: origin.url("/to?location=\(outside.absoluteString)"))!)
            }
            #expect(refusal(redirected)?.url == outside)
            #expect(refusal(redirected)?.reason == "the URL is outside the allowed sources")
            let direct = await magpieError { try await downloader.downloadData(with: outside) }
            #expect(refusal(direct)?.url == outside)
            #expect(origin.requestCount(path: "/img/pic.png") == 0)
            let inside = URL(string: origin.url("/to?location=\(origin.url("/img/photo.jpg"))"))!
            let followed = try await downloader.downloadData(with: inside)
            #expect(followed.data == OriginFixture.jpeg)
        }
    }

    @Test func aHopWithADotSegmentUnderAnAllowedPrefixIsRefusedInEverySpelling() async throws {
        try await withGuardedOrigin({ origin in
            NetworkAccessPolicy(allowedNetworks: Self.loopback, allowedSourcePrefixes: [origin.url("/to"), origin.url("/img/photo/")])
        }) { origin, downloader in
            for escape in ["../", "%2e%2e/", "%2E%2E/", "..%2f", "..%2F", "..%5c"] {
                let outside = URL(string: origin.url("/img/photo/" + escape + "pic.png"))!
                let direct = await magpieError { try await downloader.downloadData(with: outside) }
                #expect(refusal(direct)?.reason == "the URL's path has a dot segment", "\(escape): \(String(describing: direct))")
                let redirected = await magpieError {
                    let encoded = outside.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                    return try await downloader.downloadData(with: URL(string: origin.url("/to?location=\(encoded)"))!)
                }
                #expect(refusal(redirected) != nil, "a redirect to \(escape)")
            }
            #expect(origin.requestCount(path: "/img/pic.png") == 0)
            #expect(origin.totalRequests == 6, "only the redirects themselves were fetched")
        }
    }

    @Test func sourcePrefixesMatchWholeHostsAndCompareTheAuthorityCaseInsensitively() {
        let prefix = "https://a.example"
        #expect(NetworkAccessPolicy.url("https://a.example/x.png", startsWith: prefix))
        #expect(NetworkAccessPolicy.url("https://A.Example/x.png", startsWith: prefix))
        #expect(NetworkAccessPolicy.url("https://a.example", startsWith: prefix))
        #expect(!NetworkAccessPolicy.url("https://a.example.evil.net/x.png", startsWith: prefix))
        #expect(!NetworkAccessPolicy.url("https://a.example@evil.net/x.png", startsWith: prefix))
        #expect(!NetworkAccessPolicy.url("https://a.example:8443/x.png", startsWith: prefix))
        #expect(NetworkAccessPolicy.url("https://a.example/img/x.png", startsWith: "https://a.example/img/"))
        #expect(!NetworkAccessPolicy.url("https://a.example/IMG/x.png", startsWith: "https://a.example/img/"))
        #expect(!NetworkAccessPolicy.url("https://a.example/imgx", startsWith: "https://a.example/img/"))
        #expect(!NetworkAccessPolicy().allowsSource(URL(string: "ftp://a.example/x.png")!))
        #expect(NetworkAccessPolicy().allowsSource(URL(string: "HTTPS://a.example/x.png")!))
    }

    @Test func localFilesAndDataURLsAreRefusedDirectlyThroughProvidersAndByRedirect() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-ssrf-\(UUID().uuidString).png")
        try OriginFixture.png.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let unguarded = ImageDownloader(name: "unguarded")
        let read = try await unguarded.downloadData(with: file)
        #expect(read.data == OriginFixture.png)
        try await unguarded.shutdown()
        try await withGuardedOrigin({ _ in NetworkAccessPolicy(allowedNetworks: Self.loopback) }) { origin, downloader in
            let data = URL(string: "data:image/png;base64," + OriginFixture.png.base64EncodedString())!
            for url in [file, data] {
                let direct = await magpieError { try await downloader.downloadData(with: url) }
                #expect(refusal(direct)?.url == url)
                let source = url.convertToSource()
                let provided = await magpieError { try await downloader.loadImageData(ImageDataRequest(source: source)) }
                #expect(refusal(provided)?.reason == "only http and https URLs are allowed")
            }
            let redirect = await magpieError {
                try await downloader.downloadData(with: URL(string: origin.url("/to?location=\(file.absoluteString)"))!)
            }
            #expect(redirect.map { if case .requestFailed(.redirectRefused) = $0 { true } else { false } } == true)
        }
    }

    @Test func aNameIsConnectedToTheAddressTheResolverGaveNotToARealDNSAnswer() async throws {
        let resolver = ScriptedResolver([["127.0.0.1"]])
        try await withGuardedOrigin({ _ in NetworkAccessPolicy(allowedNetworks: Self.loopback, resolver: resolver) }) { origin, downloader in
            // Real DNS cannot resolve this name: only the pinned address makes the download work.
            let url = URL(string: "http://images.magpie.test:\(origin.port)/echo/pic.png")!
            let result = try await downloader.downloadData(with: url)
            #expect(result.data == OriginFixture.png)
            #expect(origin.lastRequestHeaders(path: "/echo/pic.png")["host"] == "images.magpie.test:\(origin.port)")
            #expect(resolver.hosts == ["images.magpie.test"])
            #expect(downloader.networkGuard?.pool.activeCount == 1)
        }
    }

    @Test(arguments: [[["203.0.113.7"], ["127.0.0.1"]], [["203.0.113.7", "127.0.0.1"]]])
    func aRebindingAnswerCannotMakeTheConnectionReachLoopback(answers: [[String]]) async throws {
        // `localhost` really is 127.0.0.1: a guard that let the HTTP client resolve again, or that asked the resolver
        // again for the connection, would reach the origin. The checked answer is a public address nothing listens on.
        let resolver = ScriptedResolver(answers)
        try await withGuardedOrigin({ _ in NetworkAccessPolicy(resolver: resolver, resolutionLifetime: .zero) }, configure: {
            $0.connectTimeout = .milliseconds(300)
            $0.downloadTimeout = .seconds(3)
        }) { origin, downloader in
            let url = URL(string: "http://localhost:\(origin.port)/img/pic.png")!
            let error = await magpieError { try await downloader.downloadData(with: url) }
            #expect(error != nil && refusal(error) == nil, "\(String(describing: error))")
            #expect(origin.totalRequests == 0)
            #expect(resolver.hosts == ["localhost"])
        }
    }

    @Test func aHostWhoseFirstAddressRefusesIsReachedThroughItsNextAddress() async throws {
        // The origin listens on 127.0.0.1 only: a connection to 127.0.0.2 on its port is refused.
        let resolver = ScriptedResolver([["127.0.0.2", "127.0.0.1"]])
        try await withGuardedOrigin({ _ in NetworkAccessPolicy(allowedNetworks: Self.loopback, resolver: resolver) }) { origin, downloader in
            let url = URL(string: "http://images.magpie.test:\(origin.port)/echo/pic.png")!
            let result = try await downloader.downloadData(with: url)
            #expect(result.data == OriginFixture.png)
            #expect(origin.totalRequests == 1)
            #expect(downloader.networkGuard?.pool.activeCount == 2)
        }
    }

    @Test func anAnswerFromTheFirstAddressIsFinalEvenWhenItIsAnError() async throws {
        // Only connecting moves on: the request reached the origin, so 127.0.0.2 is never tried.
        let resolver = ScriptedResolver([["127.0.0.1", "127.0.0.2"]])
        try await withGuardedOrigin({ _ in NetworkAccessPolicy(allowedNetworks: Self.loopback, resolver: resolver) }) { origin, downloader in
            let url = URL(string: "http://images.magpie.test:\(origin.port)/status/503")!
            let error = await magpieError { try await downloader.downloadData(with: url) }
            #expect(error.map { if case .responseFailed(.badStatus(let info)) = $0 { info.statusCode == 503 } else { false } } == true,
                "\(String(describing: error))")
            #expect(origin.totalRequests == 1)
            #expect(downloader.networkGuard?.pool.activeCount == 1)
        }
    }

    @Test func whenNoAddressTakesTheConnectionTheDownloadFailsAsAConnectionFailure() async throws {
        let resolver = ScriptedResolver([["127.0.0.2", "127.0.0.3"]])
        try await withGuardedOrigin({ _ in NetworkAccessPolicy(allowedNetworks: Self.loopback, resolver: resolver) }) { origin, downloader in
            let url = URL(string: "http://images.magpie.test:\(origin.port)/echo/pic.png")!
            let error = await magpieError { try await downloader.downloadData(with: url) }
            #expect(error.map { if case .requestFailed(.connectionFailed(url, "connection refused")) = $0 { true } else { false } } == true,
                "\(String(describing: error))")
            #expect(origin.totalRequests == 0)
            #expect(downloader.networkGuard?.pool.activeCount == 2)
        }
    }

    @Test func onlyFailuresToConnectCountAsNothingSent() {
        #expect(TransportError.isConnectFailure(IOError(errnoCode: ECONNREFUSED, reason: "connect")))
        #expect(TransportError.isConnectFailure(IOError(errnoCode: EHOSTUNREACH, reason: "connect")))
        #expect(TransportError.isConnectFailure(ChannelError.connectTimeout(.seconds(1))))
        #expect(TransportError.isConnectFailure(HTTPClientError.connectTimeout))
        #expect(!TransportError.isConnectFailure(IOError(errnoCode: ECONNRESET, reason: "read")))
        #expect(!TransportError.isConnectFailure(ChannelError.ioOnClosedChannel))
        #expect(!TransportError.isConnectFailure(HTTPClientError.remoteConnectionClosed))
        #expect(!TransportError.isConnectFailure(HTTPClientError.readTimeout))
    }

    @Test func anEvictedPinnedClientFinishesItsRequestBeforeItIsShutDown() async throws {
        let resolver = ScriptedResolver([["127.0.0.1"]])
        let policy = NetworkAccessPolicy(allowedNetworks: Self.loopback, resolver: resolver, maximumPinnedClients: 1)
        try await withGuardedOrigin({ _ in policy }) { origin, downloader in
            let pool = try #require(downloader.networkGuard?.pool)
            origin.hold("pic.png")
            defer { origin.release("pic.png") }
            let held = Task { try await downloader.downloadData(with: URL(string: "http://a.magpie.test:\(origin.port)/img/pic.png")!) }
            let deadline = ContinuousClock.now + .seconds(5)
            while origin.heldRequests == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            try #require(origin.heldRequests == 1)
            // A second host takes the only slot: the first host's client is retired, not shut down under its request.
            let other = try await downloader.downloadData(with: URL(string: "http://b.magpie.test:\(origin.port)/img/photo.jpg")!)
            #expect(other.data == OriginFixture.jpeg)
            #expect(pool.activeCount == 1 && pool.openCount == 2)
            origin.release("pic.png")
            let finished = try await held.value
            #expect(finished.data == OriginFixture.png)
            #expect(pool.openCount == 1)
        }
    }

    @Test func refusalsAreNeitherTransientNorRememberedAsFailedURLs() {
        let url = URL(string: "http://127.0.0.1/x.png")!
        let error = MagpieError.requestFailed(reason: .networkAccessRefused(url, reason: "127.0.0.1 is loopback"))
        #expect(!error.isTransient)
        #expect(!FailedURLList.isPermanent(error))
        #expect(error.url == url)
        #expect(error.description == "request failed: network access to http://127.0.0.1/x.png refused: 127.0.0.1 is loopback")
    }
}
