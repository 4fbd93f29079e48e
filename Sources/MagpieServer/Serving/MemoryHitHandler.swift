import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers image requests whose result is in memory right on the connection's event loop, and hands every other
/// request to Hummingbird unchanged.
///
/// Through Hummingbird, each request crosses from the event loop to a task and each response back (measured: those
/// hops, not Magpie's own work, were most of a cached answer's CPU). A memory hit needs neither: it is a dictionary
/// lookup and a write. Responses keep request order: while any request handed to Hummingbird on this connection is
/// unanswered (a pipelining client), later ones are handed over too.
///
/// It sits after Hummingbird's connection-state handler, so idle timeouts and graceful shutdown count its answers.
final class MemoryHitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let server: ImageServer
    private let responseHeaders: ResponseHeaderClock
    /// Requests handed to Hummingbird whose response has not ended yet.
    private var handedOver = 0
    /// True from an answered request's head to its end: its body parts (if a client sent any) are dropped.
    private var droppingAnsweredRequest = false

    init(server: ImageServer, responseHeaders: ResponseHeaderClock) {
        self.server = server
        self.responseHeaders = responseHeaders
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if handedOver == 0, let answer = memoryHit(for: head, context: context) {
                droppingAnsweredRequest = true
                write(answer, context: context)
                return
            }
            handedOver += 1
            context.fireChannelRead(data)
        case .body, .end:
            guard droppingAnsweredRequest else {
                context.fireChannelRead(data)
                return
            }
            if case .end = unwrapInboundIn(data) { droppingAnsweredRequest = false }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { handedOver = max(0, handedOver - 1) }
        context.write(data, promise: promise)
    }

    /// The server's answer when `head` is an image request served from memory; nil hands the request over.
    private func memoryHit(for head: HTTPRequest, context: ChannelHandlerContext) -> ImageServerResponse? {
        // `Connection: close` (or anything but keep-alive) is Hummingbird's to honour: it closes after the response.
        guard head.method == .get || head.method == .head,
            head.headerFields[.connection].map({ $0.lowercased() == "keep-alive" }) ?? true,
            let target = head.path, target.hasPrefix("/")
        else { return nil }
        // The path as Hummingbird's router sees it (`request.uri.path`): everything before the query. Searched as
        // bytes: a search by Character walks grapheme clusters, which was 5 % of a cached answer's CPU (perf).
        let path = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(target[..<$0]) } ?? target
        if !clientAddressRead {
            clientAddress = context.channel.remoteAddress?.ipAddress
            clientAddressRead = true
        }
        return server.memoryHitResponse(
            to: ImageServerRequest(
                method: head.method == .head ? "HEAD" : "GET", path: path, accept: head.headerFields[.accept],
                ifNoneMatch: head.headerFields[.ifNoneMatch], ifModifiedSince: head.headerFields[.ifModifiedSince],
                clientAddress: clientAddress, userAgent: head.headerFields[.userAgent], referer: head.headerFields[.referer],
                requestID: ImageServerRequest.acceptedRequestID(head.headerFields[ImageServer.requestIDField])))
    }

    /// The peer's address, read once per connection (the access log shows it on every line).
    private var clientAddress: String?
    private var clientAddressRead = false

    /// The names ``ImageServer`` answers images with, made once (a name made from text is checked and lowercased).
    private static let knownNames: [String: HTTPField.Name] = [
        "Content-Type": .contentType, "Content-Length": .contentLength, "Cache-Control": .cacheControl, "ETag": .eTag,
        "Last-Modified": .lastModified, "Vary": .vary, "X-Magpie-Cache": HTTPField.Name("X-Magpie-Cache")!,
        "X-Request-ID": ImageServer.requestIDField, "Content-Disposition": .contentDisposition,
    ]

    private func write(_ answer: ImageServerResponse, context: ChannelHandlerContext) {
        var fields = HTTPFields()
        fields.reserveCapacity(answer.headers.count + 2)
        for (name, value) in answer.headers {
            if let field = Self.knownNames[name] ?? HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        // What Hummingbird's application adds to every response it writes.
        fields[.date] = responseHeaders.date()
        if let serverName = responseHeaders.serverName { fields[.server] = serverName }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .init(code: answer.status), headerFields: fields))), promise: nil)
        if !answer.body.isEmpty {
            context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: answer.body))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
