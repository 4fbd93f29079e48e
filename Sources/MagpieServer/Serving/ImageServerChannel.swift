import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1.1 child channel with a ``MemoryHitHandler`` added after its connection-state handler, so
/// memory hits are answered on the event loop and everything else reaches the router as before.
struct ImageServerChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    let server: ImageServer
    let responseHeaders: ResponseHeaderClock

    var responder: Responder { base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let server = server
        let responseHeaders = responseHeaders
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let state = try operations.context(handlerType: HTTPConnectionStateHandler.self)
            try operations.addHandler(
                MemoryHitHandler(server: server, responseHeaders: responseHeaders), position: .after(state.handler))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
