import Configuration
import Foundation
import Magpie
import MagpieServer
import SystemPackage

/// `magpie serve`'s settings from four layers: flags, then `MAGPIE_…` environment variables, then imgproxy's
/// `IMGPROXY_…` ones (``ImgproxyEnvironment``), then the `--config` JSON file (swift-configuration reads the last
/// three). Every setting is declared once, in ``ServeSetting/all``, with its key (`maxSourceBytes` ↔
/// `--max-source-bytes` ↔ `MAGPIE_MAX_SOURCE_BYTES`). A flag, key or `MAGPIE_` variable that names no setting is an
/// error that suggests the nearest one: a misspelt limit must not silently leave the default in place.
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
    /// Where each setting came from, by key, for `--print-config`: `flag --x`, `MAGPIE_X`, `IMGPROXY_Y`, `config file`.
    var origins: [String: String] = [:]

    /// The settings `arguments` (the command line's setting flags, ``ServeSetting/parseFlags(_:)``), `environment` and
    /// the file at `configPath` (or `MAGPIE_CONFIG`) give.
    init(flags: [String: [String]], configPath: String?, environment: [String: String] = ProcessInfo.processInfo.environment) async throws {
        try Self.checkEnvironment(environment)
        let imgproxy = try ImgproxyEnvironment.translate(environment)
        unsupportedImgproxyVariables = imgproxy.unsupported
        let secrets = Set(ServeSetting.all.filter(\.isSecret).map(\.environmentName))
        var providers: [any ConfigProvider] = [
            EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: .specific(secrets))
                .prefixKeys(with: "magpie"),
            EnvironmentVariablesProvider(environmentVariables: imgproxy.variables, secretsSpecifier: .specific(secrets))
                .prefixKeys(with: "magpie"),
        ]
        let configPath = configPath ?? environment["MAGPIE_CONFIG"]
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
        for setting in ServeSetting.all {
            if flags[setting.key] != nil {
                origins[setting.key] = "flag --\(setting.flag)"
            } else if environment[setting.environmentName] != nil {
                origins[setting.key] = setting.environmentName
            } else if let variable = imgproxy.origins[setting.environmentName] {
                origins[setting.key] = variable
            } else if fileKeys.contains(setting.key) {
                origins[setting.key] = "config file"
            }
        }
        for setting in ServeSetting.all {
            try await setting.apply(&self, ServeSetting.Reader(setting: setting, flags: flags, layers: layers))
        }
    }

    /// Key/salt pairs from `--key`/`--salt` flags, else `--key-file` (flag, variable or file setting), else
    /// `MAGPIE_KEY`/`MAGPIE_SALT` (comma-separated for several).
    static func signingKeys(keys: ServeSetting.Reader, salts: ServeSetting.Reader, file: ServeSetting.Reader) throws -> [(key: String, salt: String)] {
        if !keys.isFlagged, let path = file.string {
            do {
                return try SigningKeyFile.read(path)
            } catch {
                throw Invalid(message: error.message)
            }
        }
        let keys = keys.strings
        let salts = salts.strings
        guard keys.count == salts.count else {
            throw Invalid(message: "give one salt per key (\(keys.count) keys, \(salts.count) salts)")
        }
        return Array(zip(keys, salts)).map { (key: $0.0, salt: $0.1) }
    }

    /// Refuses `MAGPIE_` variables that name no setting, suggesting the nearest one.
    static func checkEnvironment(_ environment: [String: String]) throws {
        let known = ServeSetting.all.map(\.environmentName)
        for name in environment.keys.sorted() where name.hasPrefix("MAGPIE_") {
            guard !known.contains(name), !ServeSetting.otherEnvironmentNames.contains(name) else { continue }
            let hint = ServeSetting.nearest(to: String(name.dropFirst(7)), among: ServeSetting.all.map(\.key))
                .flatMap(ServeSetting.named).map { " (did you mean \($0.environmentName)?)" } ?? ""
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
        let known = ServeSetting.all.map(\.key)
        for key in settings.keys.sorted() where !known.contains(key) {
            let hint = ServeSetting.nearest(to: key, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw Invalid(message: "unknown setting \"\(key)\" in the configuration file \(path)\(hint)")
        }
        return Set(settings.keys)
    }

    /// Typed lookups in the environment and file layers, with errors that name the key.
    struct Layers {
        let reader: ConfigReader

        func string(_ key: String) -> String? { reader.string(forKey: ConfigKey(key)) }
        func strings(_ key: String) -> [String] { reader.stringArray(forKey: ConfigKey(key)) ?? [] }
        func bool(_ key: String) -> Bool? { reader.bool(forKey: ConfigKey(key)) }

        func int(_ key: String) throws(Invalid) -> Int? {
            if let value = reader.int(forKey: ConfigKey(key)) { return value }
            guard let text = string(key) else { return nil }
            guard let value = Int(text) else { throw Invalid(message: "\(key): \"\(text)\" is not a whole number") }
            return value
        }

        func double(_ key: String) throws(Invalid) -> Double? {
            if let value = reader.double(forKey: ConfigKey(key)) { return value }
            if let value = reader.int(forKey: ConfigKey(key)) { return Double(value) }
            guard let text = string(key) else { return nil }
            guard let value = Double(text) else { throw Invalid(message: "\(key): \"\(text)\" is not a number") }
            return value
        }

        func bytes(_ key: String) throws(Invalid) -> Int? {
            if let value = reader.int(forKey: ConfigKey(key)) { return value }
            guard let text = string(key) else { return nil }
            guard let value = ByteCount(parsing: text) else {
                throw Invalid(message: "\(key): \"\(text)\" is not a size such as 50MB")
            }
            return value.bytes
        }
    }
}

extension ServeSettings {
    /// `--print-config`'s text: every setting with the value in effect and where it came from, one per line, keys and
    /// salts shown only by count.
    func printedConfiguration() -> String {
        let width = ServeSetting.all.map(\.key.count).max() ?? 0
        var text = ""
        for setting in ServeSetting.all {
            let name = setting.key.padding(toLength: width, withPad: " ", startingAt: 0)
            text += "\(name)  \(setting.shown(self))  (\(origins[setting.key] ?? "default"))\n"
        }
        for variable in unsupportedImgproxyVariables { text += "ignored: \(variable) (imgproxy setting Magpie does not have)\n" }
        return text
    }
}
