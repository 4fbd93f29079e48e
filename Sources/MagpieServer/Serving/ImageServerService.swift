import Hummingbird
import HummingbirdCore
import Logging
import Magpie
import NIOCore
import ServiceLifecycle
import Synchronization

/// Runs an ``ImageServer`` as an HTTP/1.1 server until SIGTERM or SIGINT: then `/ready` turns 503, new connections
/// are refused, requests in flight finish (within the shutdown timeout), the caches are flushed, and ``run()`` returns.
public struct ImageServerService: Sendable {
    /// The server to run.
    public let server: ImageServer
    /// The address to listen on. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (reported through `onListening`). Default 8080.
    public var port = 8080
    /// Longest the graceful shutdown may take before connections are cut. Default 30 s.
    public var shutdownTimeout: Duration = .seconds(30)
    /// How long an idle keep-alive connection stays open. Default 75 s: longer than load balancers' usual 60 s, so
    /// they close first and never send on a connection this side is closing.
    public var idleTimeout: Duration = .seconds(75)
    /// How often the allocator's free pages go back to the kernel (``AllocatorPolicy/releaseFreeMemory()``), or nil
    /// for never. Default nil: the allocator belongs to the whole process, so an embedding application opts in;
    /// `magpie serve` uses 10 s.
    public var freeMemoryReleaseInterval: Duration?
    /// Called once the server accepts connections, with the host and the port it got.
    public var onListening: @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }
    /// Where the HTTP server and the lifecycle log.
    public var logger = Logger(label: "magpie.server")
    /// Starts the same graceful shutdown a signal does, from code (tests, an embedding application).
    public let shutdownTrigger = ShutdownTrigger()

    /// A service for `server` with the defaults above.
    public init(server: ImageServer) {
        self.server = server
    }

    /// Serves until a shutdown signal, then stops gracefully.
    ///
    /// - Throws: When the address cannot be bound.
    public func run() async throws {
        let router = Router(context: BasicRequestContext.self)
        server.addRoutes(to: router)
        let idle = TimeAmount.nanoseconds(Int64(idleTimeout.components.seconds) * 1_000_000_000)
        let host = host
        let onListening = onListening
        let server = server
        let serverName = "Magpie"
        let responseHeaders = ResponseHeaderClock(serverName: serverName)
        // Memory hits are answered before the router (MemoryHitHandler); the rest goes through it as usual.
        let channel = HTTPServerBuilder { responder in
            ImageServerChannel(
                base: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idle)), server: server,
                responseHeaders: responseHeaders)
        }
        let application = Application(
            router: router,
            server: channel,
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in onListening(host, channel.localAddress?.port ?? 0) },
            logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: application), .init(service: ReadinessService(server: server)),
        ]
        if let interval = freeMemoryReleaseInterval {
            services.append(.init(service: FreeMemoryReleaseService(interval: interval)))
        }
        var configuration = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownTimeout
        let group = ServiceGroup(configuration: configuration)
        await shutdownTrigger.attach(group)
        do {
            try await group.run()
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
}

/// Turns `/ready` to 503 as soon as shutdown begins. Listed after the application, so the group stops it first.
private struct ReadinessService: Service {
    let server: ImageServer

    func run() async throws {
        try? await gracefulShutdown()
        server.beginShutdown()
    }
}

/// Gives free allocator memory back to the kernel every `interval` until shutdown begins.
private struct FreeMemoryReleaseService: Service {
    let interval: Duration

    func run() async throws {
        // Ends at shutdown's start, so it never holds the group open.
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                AllocatorPolicy.releaseFreeMemory()
            }
        }
    }
}

/// Triggers an ``ImageServerService``'s graceful shutdown from code; a trigger pulled before the service runs stops
/// it as soon as it starts.
public final class ShutdownTrigger: Sendable {
    private let state = Mutex<(group: ServiceGroup?, pulled: Bool)>((nil, false))

    /// A trigger not yet attached to a running service.
    public init() {}

    /// Begins the graceful shutdown: `/ready` turns 503, the listener closes, requests in flight finish.
    public func pull() async {
        let group = state.withLock { state -> ServiceGroup? in
            state.pulled = true
            return state.group
        }
        await group?.triggerGracefulShutdown()
    }

    func attach(_ group: ServiceGroup) async {
        let pulled = state.withLock { state -> Bool in
            state.group = group
            return state.pulled
        }
        if pulled { await group.triggerGracefulShutdown() }
    }
}
