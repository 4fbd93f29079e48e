import Configuration
import Foundation
import Magpie
import MagpieServer
import SystemPackage

/// `magpie serve`'s settings from four layers: flags, then `MAGPIE_…` environment variables, then imgproxy's
/// `IMGPROXY_…` ones (``ImgproxyEnvironment``), then the `--config` JSON file (swift-configuration reads the last
/// three; keys are ``ServeSettingKey``'s camelCase names, `maxSourceBytes` ↔ `MAGPIE_MAX_SOURCE_BYTES`). A key or
/// `MAGPIE_` variable that names no setting is an error that suggests the nearest one: a misspelt limit must not
/// silently leave the default in place.
struct ServeSettings {
    /// A value no layer may have; the message names the setting and the layer's value.
    struct Invalid: Error {
        let message: String
    }

    var server = ImageServerConfiguration()
    var host = "127.0.0.1"
    var port = 8080
    var shutdownTimeout: Duration = .seconds(30)
    var drainDelay: Duration = .zero
    var idleTimeout: Duration = .seconds(75)
    var headTimeout: Duration = .seconds(10)
    var metricsAddress: (host: String, port: Int)?
    /// imgproxy variables set that Magpie has no use for (named in a warning at start).
    var unsupportedImgproxyVariables: [String] = []
    /// Where each setting came from, for `--print-config`: `flag --x`, `MAGPIE_X`, `IMGPROXY_Y`, `config file`.
    var origins: [ServeSettingKey: String] = [:]

    init(command: ServeCommand, environment: [String: String] = ProcessInfo.processInfo.environment) async throws {
        try Self.checkEnvironment(environment)
        let imgproxy = try ImgproxyEnvironment.translate(environment)
        unsupportedImgproxyVariables = imgproxy.unsupported
        let secrets = ["MAGPIE_KEY", "MAGPIE_SALT", "MAGPIE_THUMBOR_KEY"]
        var providers: [any ConfigProvider] = [
            EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: .specific(Set(secrets)))
                .prefixKeys(with: "magpie"),
            EnvironmentVariablesProvider(environmentVariables: imgproxy.variables, secretsSpecifier: .specific(Set(secrets)))
                .prefixKeys(with: "magpie"),
        ]
        let configPath = command.config ?? environment["MAGPIE_CONFIG"]
        var fileKeys: Set<String> = []
        if let configPath {
            fileKeys = try Self.checkConfigFile(configPath)
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(configPath)))
            } catch {
                throw Invalid(message: "cannot read the configuration file \(configPath): \(error)")
            }
        }
        let layers = Layers(reader: ConfigReader(providers: providers))
        for key in ServeSettingKey.allCases {
            if command.givenFlags.contains(key.flagName) {
                origins[key] = "flag --\(key.flagName)"
            } else if environment[key.environmentName] != nil {
                origins[key] = key.environmentName
            } else if let variable = imgproxy.origins[key.environmentName] {
                origins[key] = variable
            } else if fileKeys.contains(key.rawValue) {
                origins[key] = "config file"
            }
        }

        host = command.host ?? layers.string(.host) ?? host
        port = try Self.port("port", command.port ?? layers.int(.port)) ?? port
        server.cacheDirectory = (command.cacheDirectory ?? layers.string(.cacheDir)).map { URL(fileURLWithPath: $0) }
        server.signingKeys = try Self.signingKeys(command: command, layers: layers)
        server.allowsUnsigned = command.insecureUnsigned || layers.bool(.insecureUnsigned) == true
        server.thumborSecurityKey = command.thumborKey ?? layers.string(.thumborKey)
        server.allowedSourcePrefixes = command.allowSource.isEmpty ? layers.strings(.allowSource) : command.allowSource
        server.allowedNetworks = command.allowNetwork.isEmpty ? layers.strings(.allowNetwork) : command.allowNetwork
        server.localRoot = command.localRoot ?? layers.string(.localRoot)
        server.maximumSourceBytes = try command.maxSourceBytes?.bytes ?? layers.bytes(.maxSourceBytes) ?? server.maximumSourceBytes
        server.maximumPixels = try positive("max-pixels", command.maxPixels ?? layers.int(.maxPixels)) ?? server.maximumPixels
        server.maximumFrames = try positive("max-frames", command.maxFrames ?? layers.int(.maxFrames)) ?? server.maximumFrames
        server.maximumResultDimension = try positive(
            "max-result-dimension", command.maxResultDimension ?? layers.int(.maxResultDimension)) ?? server.maximumResultDimension
        server.maximumWorkingMemory = try command.maxWorkingMemory?.bytes ?? layers.bytes(.maxWorkingMemory) ?? server.maximumWorkingMemory
        server.maximumOptions = try positive("max-options", command.maxOptions ?? layers.int(.maxOptions)) ?? server.maximumOptions
        server.downloadTimeout = try seconds("download-timeout", command.downloadTimeout ?? layers.double(.downloadTimeout))
            ?? server.downloadTimeout
        server.processingTimeout = try seconds("processing-timeout", command.processingTimeout ?? layers.double(.processingTimeout))
            ?? server.processingTimeout
        server.workers = try positive("workers", command.workers ?? layers.int(.workers)) ?? server.workers
        if let queue = try command.queue ?? layers.int(.queue) {
            guard queue >= 0 else { throw Invalid(message: "--queue must be 0 or more") }
            server.queueLength = queue
        }
        if let maxAge = try command.maxAge ?? layers.int(.maxAge) {
            guard maxAge >= 0 else { throw Invalid(message: "--max-age must be 0 or more") }
            server.maxAge = .seconds(maxAge)
        }
        server.diskCacheSize = try command.diskCacheSize?.bytes ?? layers.bytes(.diskCacheSize) ?? server.diskCacheSize
        server.memoryCacheSize = try command.memoryCacheSize?.bytes ?? layers.bytes(.memoryCacheSize) ?? server.memoryCacheSize
        for preset in command.presets.isEmpty ? layers.strings(.preset) : command.presets {
            guard let equals = preset.firstIndex(of: "="), equals != preset.startIndex else {
                throw Invalid(message: "--preset \"\(preset)\": expected NAME=option/option/...")
            }
            let options = preset[preset.index(after: equals)...].split(separator: "/").map(String.init)
            server.presets[String(preset[..<equals])] = options
        }
        if let quality = try command.quality ?? layers.int(.quality) {
            guard (1...100).contains(quality) else { throw Invalid(message: "--quality must be within 1...100, not \(quality)") }
            server.defaultQuality = quality
        }
        if let text = command.formatQuality ?? layers.strings(.formatQuality).joined(separator: ",").nonEmpty {
            server.formatQuality = try Self.formatQualities(text)
        }
        let enforceAvif = command.enforceAvif || layers.bool(.enforceAvif) == true
        let enforceWebp = command.enforceWebp || layers.bool(.enforceWebp) == true
        server.enforcedFormats = (enforceAvif ? [.avif] : []) + (enforceWebp ? [.webp] : [])
        server.sendsETag = !command.noETag && layers.bool(.etag) != false
        server.allowsSecurityOptions = command.allowSecurityOptions || layers.bool(.allowSecurityOptions) == true
        if let watermark = command.watermark ?? layers.string(.watermark) {
            server.watermark = try await Self.watermark(watermark)
        }
        if let model = command.faceModel ?? layers.string(.faceModel) {
            // Named on purpose, so a wrong path is a start-up error, not a quiet "no faces" at the first smart crop.
            guard model == "none" || FileManager.default.isReadableFile(atPath: model) else {
                throw Invalid(message: "--face-model \"\(model)\" is not a readable file (or none)")
            }
            server.faceDetection = model == "none" ? nil : server.faceDetection.map { var faces = $0; faces.modelPath = model; return faces }
        }
        if let budget = try seconds("face-budget", command.faceBudget ?? layers.double(.faceBudget)) {
            server.faceDetection?.budget = budget
        }
        server.developmentPage = command.dev || layers.bool(.dev) == true
        server.accessLog = !(command.noAccessLog || layers.bool(.noAccessLog) == true)
        if let format = command.accessLogFormat ?? layers.string(.accessLogFormat) {
            guard let parsed = AccessLogFormat(rawValue: format) else {
                let known = AccessLogFormat.allCases.map(\.rawValue).joined(separator: ", ")
                throw Invalid(message: "--access-log-format \"\(format)\" is not one of \(known)")
            }
            server.accessLogFormat = parsed
        }
        shutdownTimeout = try seconds("shutdown-timeout", command.shutdownTimeout ?? layers.double(.shutdownTimeout)) ?? shutdownTimeout
        if let drain = try command.drainDelay ?? layers.double(.drainDelay) {
            guard drain >= 0, drain.isFinite else { throw Invalid(message: "--drain-delay must be 0 or more seconds") }
            drainDelay = .milliseconds(Int((drain * 1000).rounded()))
        }
        idleTimeout = try seconds("idle-timeout", command.idleTimeout ?? layers.double(.idleTimeout)) ?? idleTimeout
        headTimeout = try seconds("header-timeout", command.headerTimeout ?? layers.double(.headerTimeout)) ?? headTimeout
        if let metricsPort = try Self.port("metrics-port", command.metricsPort ?? layers.int(.metricsPort)) {
            metricsAddress = (command.metricsHost ?? layers.string(.metricsHost) ?? host, metricsPort)
        } else if command.metricsHost != nil || layers.string(.metricsHost) != nil {
            throw Invalid(message: "--metrics-host needs --metrics-port")
        }
    }

    /// Key/salt pairs from `--key`/`--salt` flags, else `--key-file` (flag, variable or file setting), else
    /// `MAGPIE_KEY`/`MAGPIE_SALT` (comma-separated for several).
    private static func signingKeys(command: ServeCommand, layers: Layers) throws -> [(key: String, salt: String)] {
        if command.keys.isEmpty, let path = command.keyFile ?? layers.string(.keyFile) {
            do {
                return try SigningKeyFile.read(path)
            } catch {
                throw Invalid(message: error.message)
            }
        }
        let keys = command.keys.isEmpty ? layers.strings(.key) : command.keys
        let salts = command.salts.isEmpty ? layers.strings(.salt) : command.salts
        guard keys.count == salts.count else {
            throw Invalid(message: "give one salt per key (\(keys.count) keys, \(salts.count) salts)")
        }
        return Array(zip(keys, salts)).map { (key: $0.0, salt: $0.1) }
    }

    /// Refuses `MAGPIE_` variables that name no setting, suggesting the nearest one.
    static func checkEnvironment(_ environment: [String: String]) throws {
        let known = ServeSettingKey.allCases.map(\.environmentName)
        for name in environment.keys.sorted() where name.hasPrefix("MAGPIE_") {
            guard !known.contains(name), !ServeSettingKey.otherEnvironmentNames.contains(name) else { continue }
            let hint = ServeSettingKey.nearest(to: String(name.dropFirst(7)), among: ServeSettingKey.allCases.map(\.rawValue))
                .map { " (did you mean \(ServeSettingKey(rawValue: $0)!.environmentName)?)" } ?? ""
            throw Invalid(message: "unknown environment variable \(name)\(hint)")
        }
    }

    /// `jpeg=70,avif=40` (imgproxy's `IMGPROXY_FORMAT_QUALITY`) as qualities per format.
    static func formatQualities(_ text: String) throws -> [ImageFormat: Int] {
        var result: [ImageFormat: Int] = [:]
        for entry in text.split(separator: ",") {
            let pair = entry.split(separator: "=")
            guard pair.count == 2, let format = ImageFormat(fileExtension: String(pair[0]).trimmingCharacters(in: .whitespaces)),
                let quality = Int(pair[1].trimmingCharacters(in: .whitespaces)), (1...100).contains(quality)
            else { throw Invalid(message: "format quality \"\(entry)\" is not FORMAT=QUALITY (jpeg=70,avif=40)") }
            result[format] = quality
        }
        return result
    }

    /// The watermark image's bytes, from a file or an `http(s)` URL (fetched once, at start).
    static func watermark(_ location: String) async throws -> Data {
        if location.hasPrefix("http://") || location.hasPrefix("https://") {
            guard let url = URL(string: location) else { throw Invalid(message: "--watermark \"\(location)\" is not a URL") }
            do {
                return try await ImageDownloader.default.downloadData(with: url).data
            } catch {
                throw Invalid(message: "cannot fetch the watermark \(location): \(error)")
            }
        }
        guard let data = FileManager.default.contents(atPath: location) else {
            throw Invalid(message: "cannot read the watermark file \(location)")
        }
        return data
    }

    /// Refuses a configuration file that is not a JSON object, with the parser's reason, or that has a key naming no
    /// setting, suggesting the nearest one (`maxSourceByte`, `max_source_bytes` and `max-source-bytes` all get
    /// `maxSourceBytes`); returns its keys.
    @discardableResult
    static func checkConfigFile(_ path: String) throws -> Set<String> {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Invalid(message: "cannot read the configuration file \(path)")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            let reason = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error.localizedDescription)"
            throw Invalid(message: "the configuration file \(path) is not valid JSON: \(reason)")
        }
        guard let settings = object as? [String: Any] else {
            throw Invalid(message: "the configuration file \(path) must hold a JSON object ({\"maxSourceBytes\": \"20MB\", …})")
        }
        let known = ServeSettingKey.allCases.map(\.rawValue)
        for key in settings.keys.sorted() where !known.contains(key) {
            let hint = ServeSettingKey.nearest(to: key, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw Invalid(message: "unknown setting \"\(key)\" in the configuration file \(path)\(hint)")
        }
        return Set(settings.keys)
    }

    private static func port(_ name: String, _ value: Int?) throws -> Int? {
        guard let value else { return nil }
        guard (0...65_535).contains(value) else { throw Invalid(message: "--\(name) \(value) is not a port (0 to 65535)") }
        return value
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

        func string(_ key: ServeSettingKey) -> String? { reader.string(forKey: ConfigKey(key.rawValue)) }
        func strings(_ key: ServeSettingKey) -> [String] { reader.stringArray(forKey: ConfigKey(key.rawValue)) ?? [] }
        func bool(_ key: ServeSettingKey) -> Bool? { reader.bool(forKey: ConfigKey(key.rawValue)) }

        func int(_ key: ServeSettingKey) throws -> Int? {
            if let value = reader.int(forKey: ConfigKey(key.rawValue)) { return value }
            guard let text = string(key) else { return nil }
            guard let value = Int(text) else { throw Invalid(message: "\(key.rawValue): \"\(text)\" is not a whole number") }
            return value
        }

        func double(_ key: ServeSettingKey) throws -> Double? {
            if let value = reader.double(forKey: ConfigKey(key.rawValue)) { return value }
            if let value = reader.int(forKey: ConfigKey(key.rawValue)) { return Double(value) }
            guard let text = string(key) else { return nil }
            guard let value = Double(text) else { throw Invalid(message: "\(key.rawValue): \"\(text)\" is not a number") }
            return value
        }

        func bytes(_ key: ServeSettingKey) throws -> Int? {
            if let value = reader.int(forKey: ConfigKey(key.rawValue)) { return value }
            guard let text = string(key) else { return nil }
            guard let value = ByteCount(parsing: text) else {
                throw Invalid(message: "\(key.rawValue): \"\(text)\" is not a size such as 50MB")
            }
            return value.bytes
        }
    }
}

extension String {
    /// Nil for an empty string.
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}

extension ServeSettings {
    /// `--print-config`'s text: every setting with the value in effect and where it came from, one per line, keys and
    /// salts shown only by count.
    func printedConfiguration() -> String {
        func seconds(_ duration: Duration) -> String { DecimalText.format(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18) }
        let s = server
        let values: [ServeSettingKey: String] = [
            .host: host, .port: String(port), .cacheDir: s.cacheDirectory?.path ?? "(temporary folder)",
            .keyFile: origins[.keyFile] == nil ? "" : "(set)", .key: "\(s.signingKeys.count) key(s)", .salt: "\(s.signingKeys.count) salt(s)",
            .thumborKey: s.thumborSecurityKey == nil ? "" : "(set)", .insecureUnsigned: String(s.allowsUnsigned), .allowSource: s.allowedSourcePrefixes.joined(separator: ","),
            .allowNetwork: s.allowedNetworks.joined(separator: ","), .localRoot: s.localRoot ?? "",
            .maxSourceBytes: String(s.maximumSourceBytes), .maxPixels: String(s.maximumPixels), .maxFrames: String(s.maximumFrames),
            .maxResultDimension: String(s.maximumResultDimension), .maxWorkingMemory: String(s.maximumWorkingMemory),
            .maxOptions: String(s.maximumOptions), .downloadTimeout: seconds(s.downloadTimeout),
            .processingTimeout: seconds(s.processingTimeout), .workers: String(s.workers), .queue: String(s.effectiveQueueLength),
            .maxAge: String(s.maxAge.components.seconds), .diskCacheSize: String(s.diskCacheSize),
            .memoryCacheSize: String(s.memoryCacheSize),
            .preset: s.presets.keys.sorted().map { "\($0)=\(s.presets[$0]!.joined(separator: "/"))" }.joined(separator: ","),
            .quality: s.defaultQuality.map(String.init) ?? "each format's ("
                + ImageCoderRegistry.shared.encodableFormats.compactMap { f in f.traits.defaultQuality.map { "\(f.rawValue) \($0)" } }
                .joined(separator: ", ") + ")",
            .formatQuality: s.formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }
                .joined(separator: ","),
            .enforceAvif: String(s.enforcedFormats.contains(.avif)), .enforceWebp: String(s.enforcedFormats.contains(.webp)),
            .etag: String(s.sendsETag), .watermark: s.watermark.map { "\($0.count) bytes" } ?? "",
            .allowSecurityOptions: String(s.allowsSecurityOptions),
            .faceModel: s.faceDetection?.modelPath ?? "none", .faceBudget: s.faceDetection.map { seconds($0.budget) } ?? "",
            .shutdownTimeout: seconds(shutdownTimeout), .drainDelay: seconds(drainDelay), .idleTimeout: seconds(idleTimeout),
            .headerTimeout: seconds(headTimeout), .dev: String(s.developmentPage), .noAccessLog: String(!s.accessLog),
            .accessLogFormat: s.accessLogFormat.rawValue, .metricsHost: metricsAddress?.host ?? "",
            .metricsPort: metricsAddress.map { String($0.port) } ?? "",
        ]
        let width = ServeSettingKey.allCases.map(\.rawValue.count).max() ?? 0
        var text = ""
        for key in ServeSettingKey.allCases {
            let name = key.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
            text += "\(name)  \(values[key] ?? "")  (\(origins[key] ?? "default"))\n"
        }
        for variable in unsupportedImgproxyVariables { text += "ignored: \(variable) (imgproxy setting Magpie does not have)\n" }
        return text
    }
}
