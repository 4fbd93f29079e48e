import AsyncHTTPClient
import Foundation
import MagpieAllocatorPolicy
import MagpieOrigin
import MagpieServer
import NIOCore
import NIOHTTP1
import Synchronization

/// A running `ImageServer` (through ``ImageServerService`` on 127.0.0.1, a free port) beside a test origin, and a
/// client to ask it. ``with(_:configure:_:)`` stops everything however the body ends.
struct ServerFixture: Sendable {
    /// The key and salt every fixture signs with (hex of "magpie-test-key" / "magpie-test-salt").
    static let key = Data("magpie-test-key".utf8).map { String(format: "%02x", $0) }.joined()
    static let salt = Data("magpie-test-salt".utf8).map { String(format: "%02x", $0) }.joined()

    let origin: ImageOrigin
    let server: ImageServer
    let service: ImageServerService
    let port: Int
    let client: HTTPClient
    let signer: ImageURLSigner

    /// One answer: status, headers, body.
    struct Answer: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// Runs `body` with a server configured by `configure` (signing key set, loopback allowed unless it removes it,
    /// cache in a fresh temporary folder, `--allow-source` set to the origin's `allowedPath` when given) and its service
    /// by `configureService`, then stops server, origin and client, also when `body` throws.
    static func with(
        extraAssets: [String: OriginAsset] = [:],
        allowingSourcesUnder allowedPath: String? = nil,
        configure: (inout ImageServerConfiguration) -> Void = { _ in },
        service configureService: (inout ImageServerService) -> Void = { _ in },
        _ body: (ServerFixture) async throws -> Void
    ) async throws {
        let origin = try await OriginFixture.start(extra: extraAssets)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-serve-test-\(UUID().uuidString)")
        var configuration = ImageServerConfiguration()
        configuration.signingKeys = [(key: key, salt: salt)]
        configuration.allowedNetworks = ["127.0.0.0/8"]
        configuration.cacheDirectory = folder
        if let allowedPath { configuration.allowedSourcePrefixes = [origin.url(allowedPath)] }
        configure(&configuration)
        let server: ImageServer
        do {
            server = try ImageServer(configuration: configuration, logger: ImageOrigin.quietLogger)
        } catch {
            await origin.stop()
            throw error
        }
        var service = ImageServerService(server: server)
        service.port = 0
        service.logger = ImageOrigin.quietLogger
        // As `magpie serve` runs it (more often, so every test's shutdown also stops the release timer).
        service.freeMemoryReleaseInterval = .milliseconds(250)
        service.releaseFreeMemory = { AllocatorPolicy.releaseFreeMemory() }
        configureService(&service)
        let (ports, sink) = AsyncStream<Int>.makeStream()
        service.onListening = { _, port in
            sink.yield(port)
            sink.finish()
        }
        let running = service
        let task = Task {
            try? await running.run()
            sink.finish()
        }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let fixture = ServerFixture(
            origin: origin, server: server, service: service, port: port, client: client,
            signer: try ImageURLSigner(hexPairs: [(key: key, salt: salt)]))
        func stop() async {
            await service.shutdownTrigger.pull()
            await task.value
            try? await client.shutdown()
            await origin.stop()
            try? FileManager.default.removeItem(at: folder)
        }
        guard port > 0 else {
            await stop()
            throw ImageOriginError.couldNotStart
        }
        do {
            try await body(fixture)
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    /// `/SIGNATURE` + `path` for a path that starts with `/`.
    func signed(_ path: String) -> String {
        "/" + signer.signature(forPath: path) + path
    }

    /// The plain-URL path for the origin asset `name` with `options`, signed: `/SIG/opt/.../plain/ENCODED[@ext]`.
    func imagePath(_ name: String, options: [String] = [], extension ext: String? = nil, route: String = "img") -> String {
        let source = origin.url("/\(route)/\(name)").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let optionPart = options.map { "/" + $0 }.joined()
        return signed(optionPart + "/plain/" + source + (ext.map { "@" + $0 } ?? ""))
    }

    /// Sends `method` for `path` to the server.
    func request(_ path: String, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
    }
}

/// Access lines a server under test writes (as JSON, one object per line), kept for the test to read.
final class AccessLogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    /// A writer that keeps each line.
    var writer: AccessLogWriter {
        AccessLogWriter { line in self.lines.withLock { $0.append(line) } }
    }

    /// The lines so far, each parsed as a JSON object.
    var entries: [[String: Any]] {
        lines.withLock { $0 }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// The raw lines so far.
    var rawLines: [String] { lines.withLock { $0 } }
}
