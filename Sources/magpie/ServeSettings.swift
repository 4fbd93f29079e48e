import Configuration
import Foundation
import MagpieServer
import SystemPackage

/// `magpie serve`'s settings from three layers: flags, then `MAGPIE_…` environment variables, then the `--config`
/// JSON file (swift-configuration reads the last two; keys are camelCase, `maxSourceBytes` ↔ `MAGPIE_MAX_SOURCE_BYTES`).
struct ServeSettings {
    /// A value no layer may have; the message names the setting and the layer's value.
    struct Invalid: Error {
        let message: String
    }

    var server = ImageServerConfiguration()
    var host = "127.0.0.1"
    var port = 8080
    var shutdownTimeout: Duration = .seconds(30)
    var idleTimeout: Duration = .seconds(75)

    init(command: ServeCommand, environment: [String: String] = ProcessInfo.processInfo.environment) async throws {
        var providers: [any ConfigProvider] = [
            EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: .specific(["MAGPIE_KEY", "MAGPIE_SALT"]))
                .prefixKeys(with: "magpie")
        ]
        let configPath = command.config ?? environment["MAGPIE_CONFIG"]
        if let configPath {
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(configPath)))
            } catch {
                throw Invalid(message: "cannot read the configuration file \(configPath): \(error)")
            }
        }
        let layers = Layers(reader: ConfigReader(providers: providers))

        host = command.host ?? layers.string("host") ?? host
        port = try command.port ?? layers.int("port") ?? port
        server.cacheDirectory = (command.cacheDirectory ?? layers.string("cacheDir")).map { URL(fileURLWithPath: $0) }
        let keys = command.keys.isEmpty ? layers.strings("key") : command.keys
        let salts = command.salts.isEmpty ? layers.strings("salt") : command.salts
        guard keys.count == salts.count else {
            throw Invalid(message: "give one salt per key (\(keys.count) keys, \(salts.count) salts)")
        }
        server.signingKeys = Array(zip(keys, salts)).map { (key: $0.0, salt: $0.1) }
        server.allowsUnsigned = command.insecureUnsigned || layers.bool("insecureUnsigned") == true
        server.allowedSourcePrefixes = command.allowSource.isEmpty ? layers.strings("allowSource") : command.allowSource
        server.allowedNetworks = command.allowNetwork.isEmpty ? layers.strings("allowNetwork") : command.allowNetwork
        server.localRoot = command.localRoot ?? layers.string("localRoot")
        server.maximumSourceBytes = try command.maxSourceBytes?.bytes ?? layers.bytes("maxSourceBytes") ?? server.maximumSourceBytes
        server.maximumPixels = try positive("max-pixels", command.maxPixels ?? layers.int("maxPixels")) ?? server.maximumPixels
        server.maximumFrames = try positive("max-frames", command.maxFrames ?? layers.int("maxFrames")) ?? server.maximumFrames
        server.downloadTimeout = try seconds("download-timeout", command.downloadTimeout ?? layers.double("downloadTimeout"))
            ?? server.downloadTimeout
        server.processingTimeout = try seconds("processing-timeout", command.processingTimeout ?? layers.double("processingTimeout"))
            ?? server.processingTimeout
        server.workers = try positive("workers", command.workers ?? layers.int("workers")) ?? server.workers
        if let queue = try command.queue ?? layers.int("queue") {
            guard queue >= 0 else { throw Invalid(message: "--queue must be 0 or more") }
            server.queueLength = queue
        }
        if let maxAge = try command.maxAge ?? layers.int("maxAge") {
            guard maxAge >= 0 else { throw Invalid(message: "--max-age must be 0 or more") }
            server.maxAge = .seconds(maxAge)
        }
        server.diskCacheSize = try command.diskCacheSize?.bytes ?? layers.bytes("diskCacheSize") ?? server.diskCacheSize
        server.memoryCacheSize = try command.memoryCacheSize?.bytes ?? layers.bytes("memoryCacheSize") ?? server.memoryCacheSize
        for preset in command.presets.isEmpty ? layers.strings("preset") : command.presets {
            guard let equals = preset.firstIndex(of: "="), equals != preset.startIndex else {
                throw Invalid(message: "--preset \"\(preset)\": expected NAME=option/option/...")
            }
            let options = preset[preset.index(after: equals)...].split(separator: "/").map(String.init)
            server.presets[String(preset[..<equals])] = options
        }
        server.developmentPage = command.dev || layers.bool("dev") == true
        server.accessLog = !(command.noAccessLog || layers.bool("noAccessLog") == true)
        shutdownTimeout = try seconds("shutdown-timeout", command.shutdownTimeout ?? layers.double("shutdownTimeout")) ?? shutdownTimeout
        idleTimeout = try seconds("idle-timeout", command.idleTimeout ?? layers.double("idleTimeout")) ?? idleTimeout
    }

    private func positive(_ name: String, _ value: Int?) throws -> Int? {
        guard let value else { return nil }
        guard value > 0 else { throw Invalid(message: "--\(name) must be positive, not \(value)") }
        return value
    }

    private func seconds(_ name: String, _ value: Double?) throws -> Duration? {
        guard let value else { return nil }
        guard value > 0, value.isFinite else { throw Invalid(message: "--\(name) must be a positive number of seconds") }
        return .milliseconds(Int((value * 1000).rounded()))
    }

    /// Typed lookups in the environment and file layers, with errors that name the key.
    private struct Layers {
        let reader: ConfigReader

        func string(_ key: String) -> String? { reader.string(forKey: ConfigKey(key)) }
        func strings(_ key: String) -> [String] { reader.stringArray(forKey: ConfigKey(key)) ?? [] }
        func bool(_ key: String) -> Bool? { reader.bool(forKey: ConfigKey(key)) }

        func int(_ key: String) throws -> Int? {
            if let value = reader.int(forKey: ConfigKey(key)) { return value }
            guard let text = string(key) else { return nil }
            guard let value = Int(text) else { throw Invalid(message: "\(key): \"\(text)\" is not a whole number") }
            return value
        }

        func double(_ key: String) throws -> Double? {
            if let value = reader.double(forKey: ConfigKey(key)) { return value }
            if let value = reader.int(forKey: ConfigKey(key)) { return Double(value) }
            guard let text = string(key) else { return nil }
            guard let value = Double(text) else { throw Invalid(message: "\(key): \"\(text)\" is not a number") }
            return value
        }

        func bytes(_ key: String) throws -> Int? {
            if let value = reader.int(forKey: ConfigKey(key)) { return value }
            guard let text = string(key) else { return nil }
            guard let value = ByteCount(parsing: text) else { throw Invalid(message: "\(key): \"\(text)\" is not a size such as 50MB") }
            return value.bytes
        }
    }
}
