import NIOCore

/// Closes a connection as soon as the client closes its side.
///
/// Hummingbird accepts connections with `allowRemoteHalfClosure`, so a client that gives up only produces an
/// `inputClosed` event and the channel stays active: a response that writes nothing (the stall route) would never
/// learn the client left. Closing on that event makes `channel.isActive` false, which the stall loop polls.
/// Real clients of this origin (AsyncHTTPClient, curl) never half-close while awaiting a response.
final class CloseOnInputClosedHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}
