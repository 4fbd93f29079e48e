import Hummingbird
import NIOCore

/// The request context of the origin's routes: Hummingbird's basic context plus the connection, so a stalled
/// response can notice that its client went away.
struct OriginRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }

    /// Whether the client still holds the connection (see `CloseOnInputClosedHandler` for why this works).
    var isClientConnected: Bool { channel.isActive }
}
