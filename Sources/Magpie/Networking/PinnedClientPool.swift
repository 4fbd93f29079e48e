import AsyncHTTPClient
import Synchronization

/// HTTP clients that connect one host name to one checked address, for ``NetworkAccessPolicy``.
///
/// AsyncHTTPClient resolves host names itself when it opens a connection; its `dnsOverride` (host → IP, with TLS SNI
/// and certificate checks still on the name) is the only way to make it use the address the policy checked, and it
/// is set per client. So each (host, address) pair gets a client, up to a capacity; the least recently used one is
/// retired to make room and shut down once the requests that hold it (leases) are done.
final class PinnedClientPool: Sendable {
    /// A client held for one hop (request and body); give it back with ``PinnedClientPool/release(_:)``.
    struct Lease: Sendable {
        let client: HTTPClient
    }

    private struct Key: Hashable {
        let host: String
        let address: IPAddress
    }

    private struct Entry {
        let client: HTTPClient
        let key: Key
        var leases: Int
        var lastUse: UInt64
        /// Evicted: no new leases; shut down when the last one is released.
        var retired = false
    }

    private struct State {
        /// Every client not shut down yet, by identity: the active ones and retired ones still leased.
        var entries: [ObjectIdentifier: Entry] = [:]
        var active: [Key: ObjectIdentifier] = [:]
        var tick: UInt64 = 0
        var closed = false
    }

    private let capacity: Int
    private let makeClient: @Sendable (_ host: String, _ address: String) -> HTTPClient
    private let state = Mutex(State())

    /// - Parameters:
    ///   - capacity: Most active clients (at least 1).
    ///   - makeClient: Creates a client whose `dnsOverride` maps `host` to `address`.
    init(capacity: Int, makeClient: @escaping @Sendable (_ host: String, _ address: String) -> HTTPClient) {
        self.capacity = max(1, capacity)
        self.makeClient = makeClient
    }

    deinit {
        // AsyncHTTPClient requires every client to be shut down before it goes away.
        for entry in state.withLock({ $0.entries.values }) { entry.client.shutdown { _ in } }
    }

    /// Active clients right now (retired ones still finishing requests not counted).
    var activeCount: Int { state.withLock { $0.active.count } }

    /// Every client not shut down yet, retired ones included.
    var openCount: Int { state.withLock { $0.entries.count } }

    /// A client whose connections to `host` go to `address`, made when there is none yet.
    ///
    /// - Throws: `HTTPClientError.alreadyShutdown` after ``shutdown()``.
    func lease(host: String, address: IPAddress) throws -> Lease {
        let key = Key(host: host, address: address)
        let (lease, evicted): (Lease?, HTTPClient?) = state.withLock { state in
            guard !state.closed else { return (nil, nil) }
            state.tick += 1
            if let id = state.active[key] {
                state.entries[id]?.leases += 1
                state.entries[id]?.lastUse = state.tick
                return (state.entries[id].map { Lease(client: $0.client) }, nil)
            }
            var evicted: HTTPClient?
            if state.active.count >= capacity, let oldest = state.active.values.min(by: {
                (state.entries[$0]?.lastUse ?? 0) < (state.entries[$1]?.lastUse ?? 0)
            }), let entry = state.entries[oldest] {
                state.active[entry.key] = nil
                if entry.leases == 0 {
                    state.entries[oldest] = nil
                    evicted = entry.client
                } else {
                    state.entries[oldest]?.retired = true
                }
            }
            let client = makeClient(host, address.description)
            state.entries[ObjectIdentifier(client)] = Entry(client: client, key: key, leases: 1, lastUse: state.tick)
            state.active[key] = ObjectIdentifier(client)
            return (Lease(client: client), evicted)
        }
        // Shut down outside the lock: its callback may run anywhere.
        evicted?.shutdown { _ in }
        guard let lease else { throw HTTPClientError.alreadyShutdown }
        return lease
    }

    /// Gives a lease back; a retired client whose last lease this was is shut down.
    func release(_ lease: Lease) {
        let id = ObjectIdentifier(lease.client)
        let finished: HTTPClient? = state.withLock { state in
            guard var entry = state.entries[id] else { return nil }
            entry.leases -= 1
            guard entry.retired, entry.leases <= 0 else {
                state.entries[id] = entry
                return nil
            }
            state.entries[id] = nil
            return entry.client
        }
        finished?.shutdown { _ in }
    }

    /// Shuts every client down, leased ones too (their requests fail, as the downloader's own client's do); later
    /// leases fail.
    func shutdown() async {
        let clients = state.withLock { state in
            state.closed = true
            defer {
                state.entries = [:]
                state.active = [:]
            }
            return state.entries.values.map(\.client)
        }
        for client in clients { try? await client.shutdown() }
    }
}
