import Hummingbird
import NIOCore

/// The request context ``ImageServerService`` routes with: Hummingbird's basic one plus the peer's address, which the
/// access log records.
public struct ImageServerRequestContext: RequestContext, RemoteAddressRequestContext {
    /// Hummingbird's per-request state.
    public var coreContext: CoreRequestContextStorage
    /// The connected peer.
    public let remoteAddress: SocketAddress?

    /// The context of a request arriving on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
