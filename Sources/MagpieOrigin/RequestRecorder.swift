import Hummingbird

/// Middleware in front of every route (and the not-found fallback): counts the request, remembers its headers and
/// turns the router's not-found error into the origin's own small HTML 404.
struct RequestRecorder: RouterMiddleware {
    typealias Context = OriginRequestContext

    let state: OriginState

    func handle(
        _ request: Request,
        context: OriginRequestContext,
        next: (Request, OriginRequestContext) async throws -> Response
    ) async throws -> Response {
        state.recordRequest(path: request.uri.path, headers: Self.lowercasedHeaders(of: request))
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return OriginRoutes.htmlResponse(status: .notFound, title: "404 Not Found", state: state)
        }
    }

    /// Header names lowercased; repeated fields joined with ", " as HTTP allows. The HTTP/1 codec moves `Host` into
    /// the request's authority, so it is put back here.
    private static func lowercasedHeaders(of request: Request) -> [String: String] {
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        if let authority = request.head.authority, headers["host"] == nil {
            headers["host"] = authority
        }
        return headers
    }
}
