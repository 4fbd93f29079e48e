// magpie-http-floor: the HTTP stack's own cost of a cached answer, for scripts/bench-cached-floor. It answers every
// GET with one file's bytes from memory and the header fields `magpie serve` sends with a memory hit, over
//   nio          NIO's HTTP/1 server pipeline and one handler that writes head, body and end (no task, no router);
//   hummingbird  Hummingbird 2's router, as an application of it would (each request handed to a task and back).
// Nothing is looked up, signed or negotiated, so the CPU per answer is what the stack costs below Magpie's own work.
//   magpie-http-floor nio|hummingbird PORT FILE
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix

/// The fields of a memory hit from `magpie serve`, less Date (each stack adds its own) and Content-Length.
let answerFields: [(String, String)] = [
    ("Content-Type", "image/jpeg"), ("Cache-Control", "public, max-age=31536000"),
    ("Content-Disposition", "inline; filename=\"floor.jpg\""), ("ETag", "\"6b86e4dfd27ea44fb8e976653d37260a\""),
    ("Last-Modified", "Mon, 07 Dec 2026 02:12:01 GMT"), ("X-Magpie-Cache", "memory"),
    ("X-Request-ID", "195a76fd00000007"), ("Server", "Magpie"),
]

/// Answers each request with the same bytes on the channel's event loop.
final class FixedAnswerHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    let body: ByteBuffer

    init(body: ByteBuffer) { self.body = body }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders(answerFields)
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

func serveWithNIO(port: Int, body: ByteBuffer) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel = try await ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(FixedAnswerHandler(body: body))
            }
        }
        .bind(host: "127.0.0.1", port: port).get()
    print("listening on http://127.0.0.1:\(port)")
    try await channel.closeFuture.get()
}

func serveWithHummingbird(port: Int, body: ByteBuffer) async throws {
    let fields = HTTPFields(answerFields.map { HTTPField(name: HTTPField.Name($0.0)!, value: $0.1) })
    let router = Router()
    router.get("/**") { _, _ -> Response in
        Response(status: .ok, headers: fields, body: .init(byteBuffer: body))
    }
    let application = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: nil),
        onServerRunning: { _ in print("listening on http://127.0.0.1:\(port)") })
    try await application.runService()
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let port = Int(arguments[2]), ["nio", "hummingbird"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: magpie-http-floor nio|hummingbird PORT FILE\n".utf8))
    exit(64)
}
let body = ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: arguments[3])))
if arguments[1] == "nio" {
    try await serveWithNIO(port: port, body: body)
} else {
    try await serveWithHummingbird(port: port, body: body)
}
