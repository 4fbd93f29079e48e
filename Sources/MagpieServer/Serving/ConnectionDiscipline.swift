import NIOCore
import NIOHTTP1

/// What a connection's two discipline handlers share: whether the next request's head is awaited, and the timer that
/// closes the connection when it does not arrive in time. Both handlers live on the connection's event loop.
final class ConnectionDiscipline {
    /// True between requests (and before the first): the next bytes start a head, and its clock starts with them.
    fileprivate var awaitingHead = true
    /// What each request whose head arrived and whose response has not ended said about the connection, in order:
    /// its response repeats it.
    fileprivate var persistence: [Persistence] = []

    /// What a request's version and `Connection` field ask for.
    fileprivate enum Persistence {
        /// HTTP/1.1 keeping the connection (nothing to say).
        case implied
        /// HTTP/1.0 asking for keep-alive: the response must confirm it, or the client takes the connection as closing.
        case keepAlive
        /// Not keep-alive: the connection closes after the response, which says so.
        case close
    }
    fileprivate var headDeadline: Scheduled<Void>?

    fileprivate func cancelDeadline() {
        headDeadline?.cancel()
        headDeadline = nil
    }

    /// The two handlers, for the pipeline: the first goes before the HTTP decoder (it sees bytes), the second right
    /// after it (it sees parsed HTTP/1 parts, with their version).
    static func handlers(headTimeout: TimeAmount?, onTimeout: @escaping () -> Void) -> (HeadTimeoutHandler, HTTP1KeepAliveHandler) {
        let shared = ConnectionDiscipline()
        return (HeadTimeoutHandler(discipline: shared, timeout: headTimeout, onTimeout: onTimeout), HTTP1KeepAliveHandler(discipline: shared))
    }
}

/// Closes a connection whose request head does not arrive within the timeout of its first byte (slowloris): the
/// idle timeout cannot, since every byte that trickles in counts as activity. Between requests nothing is timed here;
/// the idle timeout governs. Answers `408` before closing, as nginx does.
final class HeadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let discipline: ConnectionDiscipline
    private let timeout: TimeAmount?
    private let onTimeout: () -> Void

    fileprivate init(discipline: ConnectionDiscipline, timeout: TimeAmount?, onTimeout: @escaping () -> Void) {
        self.discipline = discipline
        self.timeout = timeout
        self.onTimeout = onTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let timeout, discipline.awaitingHead, discipline.headDeadline == nil {
            discipline.headDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [discipline, onTimeout] in
                discipline.headDeadline = nil
                guard discipline.awaitingHead, context.channel.isActive else { return }
                onTimeout()
                let answer = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
                context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: answer)), promise: nil)
                context.close(promise: nil)
            }
        }
        // The decoder parses these bytes before this returns: a head they complete has disarmed the deadline by then.
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        discipline.cancelDeadline()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        discipline.cancelDeadline()
    }
}

/// HTTP/1.0 and `Connection: close` semantics for Hummingbird, which keeps every connection open unless the request's
/// `Connection` field is exactly `close`: a request that is not keep-alive by its version and headers (an HTTP/1.0
/// request without `Connection: keep-alive`, or any spelling of `close`) is passed on with `Connection: close`, and
/// its response says so too; an HTTP/1.0 request that asks for keep-alive gets it confirmed. Also tells ``HeadTimeoutHandler`` when heads arrive and responses end.
final class HTTP1KeepAliveHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let discipline: ConnectionDiscipline

    fileprivate init(discipline: ConnectionDiscipline) {
        self.discipline = discipline
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        discipline.cancelDeadline()
        discipline.awaitingHead = false
        let persistence: ConnectionDiscipline.Persistence =
            !head.isKeepAlive ? .close : head.version.major == 1 && head.version.minor == 0 ? .keepAlive : .implied
        discipline.persistence.append(persistence)
        guard persistence == .close, head.headers["connection"] != ["close"] else {
            context.fireChannelRead(data)
            return
        }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200 && discipline.persistence.first.map({ $0 != .implied }) == true:
            head.headers.replaceOrAdd(name: "Connection", value: discipline.persistence.first == .close ? "close" : "keep-alive")
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            if !discipline.persistence.isEmpty { discipline.persistence.removeFirst() }
            if discipline.persistence.isEmpty { discipline.awaitingHead = true }
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }
}
