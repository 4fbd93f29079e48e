import AsyncHTTPClient
import Foundation
import MagpieServer
import Testing

@testable import MagpieCore

/// `magpie serve` as a process: the listening line, flags over environment over file, SIGTERM with a request in flight.
@Suite("magpie serve", .serialized)
struct ServeCommandTests {
    /// A running `magpie serve`: its base URL and process; `stop()` sends SIGTERM and returns the exit status.
    final class Served: @unchecked Sendable {
        let process: Process
        let base: String
        let errors: Pipe

        init(arguments: [String], environment: [String: String] = [:]) throws {
            process = Process()
            process.executableURL = try BuiltProducts.executable("magpie")
            process.arguments = ["serve", "--port", "0"] + arguments
            var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MAGPIE_") }
            merged.merge(environment) { _, new in new }
            process.environment = merged
            let out = Pipe()
            errors = Pipe()
            process.standardOutput = out
            process.standardError = errors
            try process.run()
            // The first line is the contract: `listening on http://HOST:PORT` once connections are accepted.
            var line = Data()
            while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
                line.append(byte)
            }
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("listening on http://127.0.0.1:") else {
                process.terminate()
                let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no listening line: \(text) \(stderr)"])
            }
            base = String(text.dropFirst("listening on ".count))
            // Drained from now on: a server that writes more than a pipe holds (its log, a sanitizer's exit report)
            // would otherwise block on the write and never exit when stop() waits for it.
            errors.fileHandleForReading.readabilityHandler = { handle in
                if handle.availableData.isEmpty { handle.readabilityHandler = nil }
            }
        }

        func stop() -> Int32 {
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            process.waitUntilExit()
            return process.terminationStatus
        }

        func get(_ path: String) async throws -> (status: Int, body: Data, cacheControl: String?) {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + path), timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 16 * 1024 * 1024)
            return (Int(response.status.code), Data(body.readableBytesView), response.headers.first(name: "Cache-Control"))
        }
    }

    private func localRoot() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-serve-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try OriginFixture.jpeg.write(to: root.appendingPathComponent("photo.jpg"))
        return root
    }

    @Test func servesASignedLocalImageAndExitsZeroOnSIGTERM() async throws {
        let root = try localRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let served = try Served(arguments: [
            "--key", ServerFixture.key, "--salt", ServerFixture.salt, "--local-root", root.path,
            "--cache-dir", root.appendingPathComponent("cache").path,
        ])
        let signer = try ImageURLSigner(hexPairs: [(key: ServerFixture.key, salt: ServerFixture.salt)])
        let path = "/resize:20x15:fit/plain/local%3A%2F%2F%2Fphoto.jpg@png"
        let answer = try await served.get("/" + signer.signature(forPath: path) + path)
        let unsigned = try await served.get("/insecure" + path)
        let health = try await served.get("/health")
        #expect(served.stop() == 0)
        #expect(answer.status == 200)
        #expect(try ImageCoderRegistry.shared.decode(answer.body).pixelSize == PixelSize(width: 20, height: 15))
        #expect(unsigned.status == 403)
        #expect(health.status == 200)
    }

    @Test func flagsWinOverTheEnvironmentWhichWinsOverTheConfigFile() async throws {
        let root = try localRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let config = root.appendingPathComponent("serve.json")
        // The file allows unsigned URLs and sets a max-age; the environment overrides the max-age; a flag the pixels.
        try Data(#"{"insecureUnsigned": true, "maxAge": 111, "maxPixels": 10, "localRoot": "\#(root.path)"}"#.utf8).write(to: config)
        let served = try Served(
            arguments: ["--config", config.path, "--max-pixels", "50000000", "--cache-dir", root.appendingPathComponent("cache").path],
            environment: ["MAGPIE_MAX_AGE": "222"])
        let answer = try await served.get("/insecure/resize:20x15:fit/plain/local%3A%2F%2F%2Fphoto.jpg@png")
        #expect(served.stop() == 0)
        #expect(answer.status == 200)
        #expect(answer.cacheControl == "public, max-age=222")
    }

    @Test func aBadSettingIsAUsageErrorNamingIt() throws {
        let run = try ProcessRun.built("magpie", ["serve", "--port", "0", "--allow-network", "10.0.0.0/99"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("10.0.0.0/99"))
        let keys = try ProcessRun.built("magpie", ["serve", "--port", "0", "--key", "zz", "--salt", "00"])
        #expect(keys.status == 2)
        #expect(keys.stderr.lowercased().contains("key"))
    }
}
