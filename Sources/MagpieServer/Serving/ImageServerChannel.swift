import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1.1 child channel with Magpie's handlers added: a ``MemoryHitHandler`` after its
/// connection-state handler, so memory hits are answered on the event loop and everything else reaches the router as
/// before; and the ``ConnectionDiscipline`` pair around the HTTP decoder (a request-head timeout, HTTP/1.0 and
/// `Connection: close` honoured).
struct ImageServerChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    let server: ImageServer
    let responseHeaders: ResponseHeaderClock
    /// Longest a request head may take from its first byte; nil for no limit.
    let headTimeout: TimeAmount?

    var responder: Responder { base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let server = server
        let responseHeaders = responseHeaders
        let headTimeout = headTimeout
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let state = try operations.context(handlerType: HTTPConnectionStateHandler.self)
            try operations.addHandler(
                MemoryHitHandler(server: server, responseHeaders: responseHeaders), position: .after(state.handler))
            let decoder = try operations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let (timeout, keepAlive) = ConnectionDiscipline.handlers(headTimeout: headTimeout) {
                server.metrics.headerTimedOut()
            }
            try operations.addHandler(keepAlive, position: .after(decoder.handler))
            try operations.addHandler(timeout, position: .first)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
