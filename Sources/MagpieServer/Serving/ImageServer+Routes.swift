import HTTPTypes
import Hummingbird
import Magpie
import NIOCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The server as Hummingbird routes, so an application can mount it beside its own.
extension ImageServer {
    /// Adds `/health`, `/ready`, `/metrics`, the development page at `/` (when enabled) and the image route (every
    /// other path, `GET` and `HEAD`) to `router`.
    ///
    /// - Parameter router: The application's router; its own routes registered before keep precedence over `**`.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get("/health") { _, _ in Self.text("ok\n") }
        router.get("/ready") { _, _ in
            self.isReady ? Self.text("ready\n") : Self.text("shutting down\n", status: .serviceUnavailable)
        }
        // Browsers ask for it on every page; it is not an image URL, so it must not count as a refused one.
        router.get("/favicon.ico") { _, _ in Self.text("not found\n", status: .notFound) }
        router.get("/metrics") { _, _ in
            let admission = self.admission
            let bytes = self.metrics.exposition(
                running: admission.running, waiting: admission.waiting, memoryBytes: self.memory.usage.bytes)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        if configuration.developmentPage {
            router.get("/") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: DevelopmentPage.html)))
            }
            router.post("/dev/sign") { request, _ in
                let body = try await request.body.collect(upTo: 64 * 1024)
                return Self.text(self.developmentSignature(for: String(buffer: body)) + "\n")
            }
        }
        router.get("**") { request, _ in await self.hummingbirdResponse(request) }
        router.head("**") { request, _ in await self.hummingbirdResponse(request) }
    }

    private func hummingbirdResponse(_ request: Request) async -> Response {
        let answer = await respond(
            to: ImageServerRequest(
                method: request.method == .head ? "HEAD" : "GET", path: request.uri.path,
                accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch],
                ifModifiedSince: request.headers[.ifModifiedSince]))
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: fields,
            body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
