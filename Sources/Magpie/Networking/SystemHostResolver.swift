#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOPosix
import Synchronization

/// The system resolver: `getaddrinfo` (hosts file, DNS, as the system is configured), run on a few threads of its
/// own so a slow lookup blocks neither the cooperative pool nor NIO's event loops.
public struct SystemHostResolver: HostResolving {
    /// The system resolver.
    public init() {}

    /// `getaddrinfo`'s answer for `host` (TCP, any family), in its order (RFC 6724), without repeats.
    ///
    /// - Throws: ``SystemHostResolver/LookupError`` for failures other than "no such name"; `CancellationError` when
    ///   the task is cancelled (the lookup finishes on its thread, unwatched).
    public func addresses(for host: String, port: Int) async throws -> [IPAddress] {
        try await Self.run { try Self.lookup(host, port: port) }
    }

    /// `getaddrinfo` failed for a reason other than "no such name".
    public struct LookupError: Error, CustomStringConvertible {
        /// The `EAI_` code.
        public let code: Int32
        /// `gai_strerror`'s text, e.g. `Temporary failure in name resolution`.
        public var description: String { String(cString: gai_strerror(code)) }
    }

    /// Lookups may block for seconds (resolver timeouts): a pool of their own, never shut down.
    private static let threads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        return pool
    }()

    #if canImport(Glibc)
    // GNU extensions the Glibc module does not import (netdb.h: "no address for the name", "none in the family").
    private static let noData: Int32 = -5
    private static let noAddressInFamily: Int32 = -9
    #else
    private static let noData = EAI_NODATA
    private static let noAddressInFamily = EAI_ADDRFAMILY
    #endif

    private static func lookup(_ host: String, port: Int) throws -> [IPAddress] {
        guard !host.utf8.contains(0) else { return [] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        switch status {
        case 0: break
        case EAI_NONAME, Self.noData, Self.noAddressInFamily: return []
        default: throw LookupError(code: status)
        }
        var addresses: [IPAddress] = []
        var next = list
        while let entry = next?.pointee {
            next = entry.ai_next
            guard let address = entry.ai_addr.flatMap(Self.address) else { continue }
            if !addresses.contains(address) { addresses.append(address) }
        }
        return addresses
    }

    private static func address(_ socketAddress: UnsafeMutablePointer<sockaddr>) -> IPAddress? {
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            let raw = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            return IPAddress(ipv4: UInt32(bigEndian: raw))
        case AF_INET6:
            let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            let value = withUnsafeBytes(of: bytes) { $0.reduce(UInt128(0)) { $0 << 8 | UInt128($1) } }
            return IPAddress(ipv6: value)
        default:
            return nil
        }
    }

    /// Runs `body` on the lookup threads; a cancelled caller is answered at once.
    private static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let waiter = Waiter<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.set(continuation)
                threads.submit { _ in waiter.resume(with: Result(catching: body)) }
            }
        } onCancel: {
            waiter.resume(with: .failure(CancellationError()))
        }
    }

    /// The caller's continuation, resumed once by whichever comes first: the lookup or the cancellation.
    private final class Waiter<T: Sendable>: Sendable {
        private let state = Mutex<(continuation: CheckedContinuation<T, any Error>?, early: Result<T, any Error>?)>((nil, nil))

        func set(_ continuation: CheckedContinuation<T, any Error>) {
            let early = state.withLock { state in
                if state.early == nil { state.continuation = continuation }
                return state.early
            }
            if let early { continuation.resume(with: early) }
        }

        func resume(with result: Result<T, any Error>) {
            let continuation = state.withLock { state in
                defer { state.continuation = nil }
                if state.continuation == nil, state.early == nil { state.early = result }
                return state.continuation
            }
            continuation?.resume(with: result)
        }
    }
}
