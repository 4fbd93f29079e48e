import Hummingbird
import HummingbirdCore
import Logging
import Magpie
import NIOCore
import ServiceLifecycle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs an ``ImageServer`` as an HTTP/1.1 server until SIGTERM or SIGINT: then `/ready` turns 503 while requests are
/// still served for the drain delay (so a balancer sees it and stops sending), then new connections are refused,
/// requests in flight finish (within the shutdown timeout; what it cuts is logged as aborted), the caches are flushed,
/// and ``run()`` returns. Each step is logged.
public struct ImageServerService: Sendable {
    /// The server to run.
    public let server: ImageServer
    /// The address to listen on. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (reported through `onListening`). Default 8080.
    public var port = 8080
    /// Longest the graceful shutdown may take, after the drain delay, before connections are cut. Default 30 s.
    public var shutdownTimeout: Duration = .seconds(30)
    /// How long `/ready` answers 503 after a shutdown signal while everything is still served, before the listener
    /// closes: longer than a balancer's health-check interval, so it stops sending first. Default zero.
    public var drainDelay: Duration = .zero
    /// How long an idle keep-alive connection stays open. Default 75 s: longer than load balancers' usual 60 s, so
    /// they close first and never send on a connection this side is closing.
    public var idleTimeout: Duration = .seconds(75)
    /// Longest a request head may take to arrive from its first byte before the connection is answered 408 and closed
    /// (slow headers hold a connection however short the idle timeout is); nil for no limit. Default 10 s.
    public var headTimeout: Duration? = .seconds(10)
    /// Where `/metrics` is served instead of the main port (the operator's scraper reaches it, the public does not);
    /// nil serves it on the main port. Port 0 picks a free one (reported through `onMetricsListening`).
    public var metricsAddress: (host: String, port: Int)?
    /// How often ``releaseFreeMemory`` runs, or nil for never. Default nil; `magpie serve` uses 10 s with glibc's malloc.
    public var freeMemoryReleaseInterval: Duration?
    /// Gives the allocator's free pages back to the kernel, every ``freeMemoryReleaseInterval`` until shutdown begins;
    /// nil for nothing. Default nil: the allocator belongs to the whole process, so its executable decides (`magpie
    /// serve` passes its allocator policy's `malloc_trim`).
    public var releaseFreeMemory: (@Sendable () -> Void)?
    /// Called once the server accepts connections, with the host and the port it got.
    public var onListening: @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }
    /// Called once the metrics listener (``metricsAddress``) accepts connections, with its host and port.
    public var onMetricsListening: @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }
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
    /// - Throws: ``ImageServerServiceError/cannotListen(address:reason:)`` when an address cannot be bound; what the
    ///   HTTP server threw otherwise.
    public func run() async throws {
        let router = Router(context: ImageServerRequestContext.self)
        server.addRoutes(to: router, includingMetrics: metricsAddress == nil)
        let host = host, onListening = onListening, server = server, logger = logger
        let serverName = "Magpie"
        let responseHeaders = ResponseHeaderClock(serverName: serverName)
        let listening = ListeningFlags()
        // Memory hits are answered before the router (MemoryHitHandler); the rest goes through it as usual.
        let idle = TimeAmount(idleTimeout)
        let head = headTimeout.map(TimeAmount.init)
        let channel = HTTPServerBuilder { responder in
            ImageServerChannel(
                base: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idle)), server: server,
                responseHeaders: responseHeaders, headTimeout: head)
        }
        let application = Application(
            router: router,
            server: channel,
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in
                listening.main.withLock { $0 = true }
                onListening(host, channel.localAddress?.port ?? 0)
            },
            logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: application)]
        if let metricsAddress {
            let metricsRouter = Router(context: ImageServerRequestContext.self)
            server.addMetricsRoute(to: metricsRouter)
            let onMetricsListening = onMetricsListening
            services.append(
                .init(
                    service: Application(
                        router: metricsRouter,
                        configuration: .init(address: .hostname(metricsAddress.host, port: metricsAddress.port), serverName: serverName),
                        onServerRunning: { channel in
                            listening.metrics.withLock { $0 = true }
                            onMetricsListening(metricsAddress.host, channel.localAddress?.port ?? 0)
                        },
                        logger: logger)))
        }
        // Last, so the group stops it first: it drains before the listeners close.
        services.append(
            .init(service: ReadinessService(server: server, drainDelay: drainDelay, listening: listening, logger: logger)))
        if let interval = freeMemoryReleaseInterval, let releaseFreeMemory {
            services.append(.init(service: FreeMemoryReleaseService(interval: interval, release: releaseFreeMemory)))
        }
        var configuration = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = drainDelay + shutdownTimeout
        let group = ServiceGroup(configuration: configuration)
        await shutdownTrigger.attach(group)
        do {
            try await group.run()
        } catch {
            await server.shutdown()
            // A listener that never came up could not bind: say which address, not only the socket call's errno.
            if !listening.main.withLock({ $0 }) {
                throw ImageServerServiceError.cannotListen(address: Self.shown(host, port), reason: Self.reason(error))
            }
            if let metricsAddress, !listening.metrics.withLock({ $0 }) {
                throw ImageServerServiceError.cannotListen(
                    address: Self.shown(metricsAddress.host, metricsAddress.port), reason: Self.reason(error))
            }
            throw error
        }
        await server.shutdown()
        logger.info("stopped")
    }

    /// `host:port`, with an IPv6 host in brackets, as the listening line writes it.
    public static func shown(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The readable part of a bind error (`Address already in use`).
    private static func reason(_ error: any Error) -> String {
        if let io = error as? IOError { return String(cString: strerror(io.errnoCode)) }
        return "\(error)"
    }
}

/// Why ``ImageServerService/run()`` could not serve.
public enum ImageServerServiceError: Error, CustomStringConvertible, Sendable {
    /// `address` (`host:port`) could not be listened on, for `reason` (`Address already in use`).
    case cannotListen(address: String, reason: String)

    /// `cannot listen on 127.0.0.1:8080: Address already in use`.
    public var description: String {
        switch self {
        case .cannotListen(let address, let reason): "cannot listen on \(address): \(reason)"
        }
    }
}

/// Whether each listener has come up, set from its `onServerRunning`.
private final class ListeningFlags: Sendable {
    let main = Mutex(false)
    let metrics = Mutex(false)
}

/// Turns `/ready` to 503 as soon as shutdown begins and keeps everything served for the drain delay; the group then
/// stops the listeners. Listed after them, so the group stops it first.
private struct ReadinessService: Service {
    let server: ImageServer
    let drainDelay: Duration
    let listening: ListeningFlags
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        server.beginShutdown()
        // A listener that failed to start ends the group too: nothing was served, so there is nothing to drain.
        guard listening.main.withLock({ $0 }) else { return }
        if drainDelay > .zero {
            logger.info("shutdown started: /ready answers 503; draining", metadata: ["seconds": "\(drainDelay.components.seconds)"])
            // Not cancelled by the shutdown itself (only by its timeout): requests keep being served meanwhile.
            try? await Task.sleep(for: drainDelay)
        } else {
            logger.info("shutdown started: /ready answers 503")
        }
        logger.info("closing the listener; requests in flight may finish")
    }
}

/// Gives free allocator memory back to the kernel (`release`) every `interval` until shutdown begins.
private struct FreeMemoryReleaseService: Service {
    let interval: Duration
    let release: @Sendable () -> Void

    func run() async throws {
        // Ends at shutdown's start, so it never holds the group open.
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                release()
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
