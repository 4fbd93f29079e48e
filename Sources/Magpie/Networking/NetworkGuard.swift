import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import AsyncHTTPClient
import Synchronization

/// Applies a downloader's ``NetworkAccessPolicy`` to each hop: checks the URL, resolves the host, keeps the allowed
/// addresses, and hands out clients pinned to them, one address at a time.
final class NetworkGuard: Sendable {
    /// Where a hop to a host name may connect: the host as AsyncHTTPClient connects to it, and every address the
    /// resolver gave that the policy allows, most preferred first (never empty).
    struct Route: Sendable {
        let host: String
        let addresses: [IPAddress]
    }

    let policy: NetworkAccessPolicy
    private let pinned: PinnedClientPool
    /// Recent answers by host, so a busy host is not resolved for every request.
    private let resolutions = Mutex<[String: (addresses: [IPAddress], expires: ContinuousClock.Instant)]>([:])
    private static let maximumResolutions = 256

    /// - Parameters:
    ///   - policy: What is allowed.
    ///   - makeClient: Creates a client whose `dnsOverride` maps a host to an address (see ``PinnedClientPool``).
    init(policy: NetworkAccessPolicy, makeClient: @escaping @Sendable (_ host: String, _ address: String) -> HTTPClient) {
        self.policy = policy
        self.pinned = PinnedClientPool(capacity: policy.maximumPinnedClients, makeClient: makeClient)
    }

    /// Checks the hop to `url` and returns where it may connect: the allowed addresses of a host name, nil for an
    /// allowed IP literal (the downloader's own client connects to exactly that address).
    ///
    /// - Throws: ``MagpieError/RequestFailureReason/networkAccessRefused(_:reason:)`` for a refused URL or when no
    ///   address is allowed; ``MagpieError/RequestFailureReason/connectionFailed(_:message:)`` when the host does not
    ///   resolve; ``MagpieError/RequestFailureReason/cancelled(_:)``.
    func route(for url: URL) async throws -> Route? {
        if let reason = policy.refusal(ofSource: url) { throw Self.refused(url, reason) }
        guard let host = Self.connectionHost(of: url) else {
            throw MagpieError.requestFailed(reason: .invalidURL(url.absoluteString))
        }
        if let literal = IPAddress(host) {
            if let reason = policy.refusal(of: literal) { throw Self.refused(url, reason) }
            return nil
        }
        let addresses = try await resolve(host, port: url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80), url: url)
        var allowed: [IPAddress] = []
        for address in addresses where policy.allows(address) && !allowed.contains(address) { allowed.append(address) }
        guard !allowed.isEmpty else {
            let reasons = addresses.compactMap(policy.refusal(of:))
            throw Self.refused(url, "\(host): " + reasons.joined(separator: "; "))
        }
        return Route(host: host, addresses: allowed)
    }

    /// A client whose connections to `route`'s host go to `address` (one of the route's); release it when the hop's
    /// body is read.
    ///
    /// - Throws: `HTTPClientError.alreadyShutdown` after ``shutdown()``.
    func lease(_ route: Route, address: IPAddress) throws -> PinnedClientPool.Lease {
        try pinned.lease(host: route.host, address: address)
    }

    /// Gives back what ``lease(_:address:)`` returned.
    func release(_ lease: PinnedClientPool.Lease?) {
        if let lease { pinned.release(lease) }
    }

    /// Shuts the pinned clients down.
    func shutdown() async { await pinned.shutdown() }

    /// The pinned clients' pool, for tests.
    var pool: PinnedClientPool { pinned }

    /// The host exactly as AsyncHTTPClient takes it when it connects (`DeconstructedURL`: the request URL's text parsed
    /// again, `host`, IPv6 brackets trimmed): the name resolved here must be the name its `dnsOverride` is looked up by.
    static func connectionHost(of url: URL) -> String? {
        guard var host = URL(string: url.absoluteString)?.host, !host.isEmpty else { return nil }
        if host.hasPrefix("[") { host.removeFirst() }
        if host.hasSuffix("]") { host.removeLast() }
        return host
    }

    private func resolve(_ host: String, port: Int, url: URL) async throws -> [IPAddress] {
        let now = ContinuousClock.now
        if let cached = resolutions.withLock({ $0[host] }), cached.expires > now { return cached.addresses }
        let addresses: [IPAddress]
        do {
            addresses = try await policy.resolver.addresses(for: host, port: port)
        } catch let error as MagpieError {
            throw error
        } catch {
            if error is CancellationError || Task.isCancelled { throw MagpieError.requestFailed(reason: .cancelled(url)) }
            throw MagpieError.requestFailed(reason: .connectionFailed(url, message: "host lookup failed (\(error))"))
        }
        guard !addresses.isEmpty else { throw MagpieError.requestFailed(reason: .connectionFailed(url, message: "host not found")) }
        if policy.resolutionLifetime > .zero {
            resolutions.withLock { cache in
                if cache.count >= Self.maximumResolutions { cache = cache.filter { $0.value.expires > now } }
                if cache.count >= Self.maximumResolutions { cache.removeAll() }
                cache[host] = (addresses, now + policy.resolutionLifetime)
            }
        }
        return addresses
    }

    private static func refused(_ url: URL, _ reason: String) -> MagpieError {
        .requestFailed(reason: .networkAccessRefused(url, reason: reason))
    }
}
