import Hummingbird
import NIOCore

/// The request context of `galley serve`: Hummingbird's basic context plus the event loop of
/// the request's connection, which a download needs to keep its memory bounded (see
/// `GalleyServer.stream`).
public struct ServeContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The loop that owns the connection: every write to it is carried out there, in order.
    let eventLoop: any EventLoop
    /// The connection, for a download to close when its reader takes nothing (`--send-timeout`).
    let channel: any Channel
    /// The address the connection reached (links without `--public-url` name it).
    let localAddress: SocketAddress?
    /// Who connected (a `--trusted-proxy`, or not).
    let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        eventLoop = source.channel.eventLoop
        channel = source.channel
        localAddress = source.channel.localAddress
        remoteAddress = source.channel.remoteAddress
    }
}
