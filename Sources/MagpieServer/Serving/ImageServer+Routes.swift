import HTTPTypes
import Hummingbird
import Magpie
import NIOCore

/// The server as Hummingbird routes, so an application can mount it beside its own.
extension ImageServer {
    /// Adds `/health`, `/ready`, `/metrics` (unless it is served elsewhere: ``addMetricsRoute(to:)``), the development
    /// page at `/` (when enabled) and the image route (every other path, `GET` and `HEAD`; other methods are answered
    /// 405 with `Allow`) to `router`.
    ///
    /// - Parameters:
    ///   - router: The application's router; its own routes registered before keep precedence over `**`.
    ///   - includingMetrics: Whether `/metrics` is served here (default true).
    public func addRoutes<Context: RequestContext>(to router: Router<Context>, includingMetrics: Bool = true) {
        router.get("/health") { _, _ in Self.text("ok\n") }
        router.get("/ready") { _, _ in
            self.isReady ? Self.text("ready\n") : Self.text("shutting down\n", status: .serviceUnavailable)
        }
        // Browsers ask for it on every page; it is not an image URL, so it must not count as a refused one.
        router.get("/favicon.ico") { _, _ in Self.text("not found\n", status: .notFound) }
        if includingMetrics {
            addMetricsRoute(to: router)
        } else {
            // Served on its own listener: here it is not an image URL either.
            router.get("/metrics") { _, _ in Self.text("not found\n", status: .notFound) }
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
        router.get("**") { request, context in await self.hummingbirdResponse(request, context: context) }
        router.head("**") { request, context in await self.hummingbirdResponse(request, context: context) }
        // Without these, Hummingbird answers other methods with an empty 404; `respond(to:)` answers them 405.
        for method in [HTTPRequest.Method.post, .put, .delete, .patch, .options, .trace] {
            router.on("**", method: method) { request, context in await self.hummingbirdResponse(request, context: context) }
        }
    }

    /// Adds `/metrics` (the Prometheus exposition) to `router`: with ``addRoutes(to:includingMetrics:)``, or on a router
    /// of its own when metrics are served on another port.
    public func addMetricsRoute<Context: RequestContext>(to router: Router<Context>) {
        router.get("/metrics") { _, _ in
            let admission = self.admission
            let bytes = self.metrics.exposition(
                running: admission.running, waiting: admission.waiting, memoryBytes: self.memory.totalCost)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    private func hummingbirdResponse<Context: RequestContext>(_ request: Request, context: Context) async -> Response {
        let method = request.method == .get ? "GET" : request.method == .head ? "HEAD" : request.method.rawValue
        let answer = await respond(
            to: ImageServerRequest(
                method: method, path: request.uri.path,
                accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch],
                ifModifiedSince: request.headers[.ifModifiedSince],
                clientAddress: (context as? any RemoteAddressRequestContext)?.remoteAddress?.ipAddress,
                userAgent: request.headers[.userAgent], referer: request.headers[.referer],
                requestID: ImageServerRequest.acceptedRequestID(request.headers[Self.requestIDField])))
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: fields,
            body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    /// `X-Request-ID`, made once.
    static let requestIDField = HTTPField.Name("X-Request-ID")!

    static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
