import Hummingbird

/// The origin's route table. Handlers live in `OriginResponses.swift` (whole responses) and `OriginStreams.swift`
/// (bodies that are slow, stall, or end early).
struct OriginRoutes: Sendable {
    let state: OriginState

    func makeRouter() -> Router<OriginRequestContext> {
        let router = Router(context: OriginRequestContext.self)
        router.add(middleware: RequestRecorder(state: state))

        router.get("/img/:name") { request, context in
            let name = try context.parameters.require("name")
            await state.waitWhileHeld(name)
            return assetResponse(name: name, request: request, context: context)
        }
        router.get("/echo/:name") { request, context in
            // The headers were already recorded by RequestRecorder; echo differs from /img only in intent.
            assetResponse(name: try context.parameters.require("name"), request: request)
        }
        router.get("/type/:name") { request, context in
            let type = request.uri.queryParameters["type"].map(String.init)
            return assetResponse(name: try context.parameters.require("name"), request: request, contentType: type)
        }
        router.get("/html") { _, _ in
            Self.htmlResponse(status: .ok, title: "Not an image", state: state)
        }
        router.get("/status/:code") { request, context in
            statusResponse(code: try context.parameters.require("code"), request: request)
        }
        router.get("/flaky/:name") { request, context in
            flakyResponse(name: try context.parameters.require("name"), request: request)
        }
        router.get("/redirect/:count/:name") { request, context in
            redirectResponse(
                count: try context.parameters.require("count"),
                name: try context.parameters.require("name"),
                request: request
            )
        }
        router.get("/to") { request, _ in
            redirectAnywhere(request: request)
        }
        router.get("/loop/:side") { request, context in
            loopResponse(side: try context.parameters.require("side"))
        }
        router.get("/slow/:name") { request, context in
            slowResponse(name: try context.parameters.require("name"), request: request)
        }
        router.get("/stall/:name") { request, context in
            stallResponse(name: try context.parameters.require("name"), request: request, context: context)
        }
        router.get("/truncate/:name") { request, context in
            truncatedResponse(name: try context.parameters.require("name"), request: request, context: context)
        }
        router.get("/length/:name") { request, context in
            overdeclaredResponse(name: try context.parameters.require("name"), request: request, context: context)
        }
        router.get("/huge") { request, _ in
            hugeResponse(request: request)
        }
        return router
    }

    /// An integer query parameter: `fallback` when absent, `nil` when present but not a non-negative integer.
    static func intParameter(_ name: String, in request: Request, default fallback: Int?) -> Int? {
        guard let text = request.uri.queryParameters[name[...]] else { return fallback }
        guard let value = Int(text), value >= 0 else { return nil }
        return value
    }
}

/// Thrown from a response body writer to end the response early.
///
/// Hummingbird closes the connection when a body writer throws, which is the only way to make a client see fewer
/// bytes than the declared Content-Length (finishing normally would leave the client waiting for the rest).
enum OriginAbort: Error {
    /// The origin is stopping; the stream gives up so graceful shutdown can finish.
    case stopping
    /// The route deliberately ends the body before its declared length.
    case truncated
    /// A stalled response ends because its client left or the origin stops.
    case stallEnded
}
