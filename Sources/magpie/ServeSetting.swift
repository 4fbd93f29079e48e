import Foundation

/// One setting of `magpie serve`, declared once (``all``, in ServeSetting+Declarations.swift): its name, what it takes,
/// its help, how it is read into ``ServeSettings`` and how `--print-config` shows it. The flag, the `MAGPIE_…` variable,
/// the `--config` file key, `--help`'s list and DEPLOYMENT.md's table all come from the declaration.
struct ServeSetting: Sendable {
    /// What the setting takes on the command line.
    enum Kind: Sendable, Equatable {
        /// One value (`--port 8080`); the last one given wins.
        case value(String)
        /// A value that may be given several times (`--allow-source A --allow-source B`), a list in the environment
        /// and the file.
        case list(String)
        /// A flag without a value (`--dev`).
        case flag
    }

    /// The `--config` file key, camelCase: `maxSourceBytes`.
    let key: String
    /// The command-line flag without its dashes: the key in kebab-case unless declared otherwise (`no-etag`).
    let flag: String
    let kind: Kind
    /// One sentence for `--help` and the documentation, with the default in it.
    let help: String
    /// Whether the value is a secret (kept out of swift-configuration's logs).
    let isSecret: Bool
    /// Reads the setting from its layers into the settings being built.
    let apply: @Sendable (inout ServeSettings, ServeSetting.Reader) async throws -> Void
    /// The value in effect, as `--print-config` shows it.
    let shown: @Sendable (ServeSettings) -> String

    init(
        _ key: String, flag: String? = nil, _ kind: Kind, secret: Bool = false, help: String,
        apply: @escaping @Sendable (inout ServeSettings, ServeSetting.Reader) async throws -> Void,
        shown: @escaping @Sendable (ServeSettings) -> String
    ) {
        self.key = key
        self.flag = flag ?? Self.kebabCase(key)
        self.kind = kind
        self.help = help
        isSecret = secret
        self.apply = apply
        self.shown = shown
    }

    /// `MAGPIE_MAX_SOURCE_BYTES` for `maxSourceBytes`.
    var environmentName: String {
        "MAGPIE_" + key.map { $0.isUppercase ? "_\($0)" : $0.uppercased() }.joined()
    }

    /// The declaration whose file key is `key`.
    static func named(_ key: String) -> ServeSetting? { all.first { $0.key == key } }

    private static func kebabCase(_ key: String) -> String {
        key.map { $0.isUppercase ? "-\($0.lowercased())" : String($0) }.joined()
    }

    /// `MAGPIE_` variables that are Magpie's but not serve settings: the config file's path, and those the sanitizer
    /// builds, the benchmarks and the test suites read (a developer's shell may export them).
    static let otherEnvironmentNames: Set<String> = [
        "MAGPIE_CONFIG", "MAGPIE_TSAN_LOCKS", "MAGPIE_CORPUS", "MAGPIE_CONFORMANCE_FORMAT", "MAGPIE_BENCH_RATIOS",
        "MAGPIE_SERVED", "MAGPIE_FAKE_FORMAT_CHILD", "MAGPIE_FACE_DETECTION_LIBRARY", "MAGPIE_UPDATE_DOCS",
    ]

    /// The known name nearest to `name`, for a "did you mean" hint: the same letters in another case or with `_` and
    /// `-` (snake_case, kebab-case), or at most a few letters off. Nil when nothing is close.
    static func nearest(to name: String, among known: [String]) -> String? {
        func folded(_ text: String) -> [Character] { Array(text.lowercased().filter { $0 != "_" && $0 != "-" }) }
        let target = folded(name)
        var best: (name: String, distance: Int)?
        for candidate in known {
            let distance = editDistance(target, folded(candidate))
            if distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        guard let best, best.distance <= max(2, target.count / 4) else { return nil }
        return best.name
    }

    /// Levenshtein distance.
    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension ServeSetting {
    /// One setting's value as its layers give it: the command line first, then the environment (`MAGPIE_…`, then what
    /// ``ImgproxyEnvironment`` translated), then the `--config` file, with errors that name the setting.
    struct Reader {
        /// The setting being read.
        let setting: ServeSetting
        /// The values given on the command line, by file key (a ``Kind/flag`` given: `["true"]`).
        let flags: [String: [String]]
        /// The environment and file layers.
        let layers: ServeSettings.Layers

        /// The same layers, for `setting`: a setting read together with another (`--key` with `--salt`).
        func other(_ setting: ServeSetting) -> Reader { Reader(setting: setting, flags: flags, layers: layers) }

        private var given: [String]? { flags[setting.key] }

        /// Whether the flag of a ``Kind/flag`` setting is on the command line.
        var isFlagged: Bool { given != nil }

        /// The text value.
        var string: String? { given?.last ?? layers.string(setting.key) }

        /// A list: the flag's values when given, else the layers' list.
        var strings: [String] { given ?? layers.strings(setting.key) }

        /// True when the flag is given or a layer says true; false when a layer says false; nil when none says.
        var bool: Bool? { isFlagged ? true : layers.bool(setting.key) }

        /// A whole number.
        var int: Int? {
            get throws(ServeSettings.Invalid) {
                guard let text = given?.last else { return try layers.int(setting.key) }
                guard let value = Int(text) else { throw invalid("\"\(text)\" is not a whole number") }
                return value
            }
        }

        /// A number.
        var double: Double? {
            get throws(ServeSettings.Invalid) {
                guard let text = given?.last else { return try layers.double(setting.key) }
                guard let value = Double(text) else { throw invalid("\"\(text)\" is not a number") }
                return value
            }
        }

        /// A size (`50MB`, `2GiB`, a plain byte count).
        var bytes: Int? {
            get throws(ServeSettings.Invalid) {
                guard let text = given?.last else { return try layers.bytes(setting.key) }
                guard let value = ByteCount(parsing: text) else { throw invalid("\"\(text)\" is not a size such as 50MB") }
                return value.bytes
            }
        }

        /// A whole number above 0.
        var positive: Int? {
            get throws(ServeSettings.Invalid) {
                guard let value = try int else { return nil }
                guard value > 0 else { throw invalid("must be positive, not \(value)") }
                return value
            }
        }

        /// A whole number of 0 or more.
        var nonNegative: Int? {
            get throws(ServeSettings.Invalid) {
                guard let value = try int else { return nil }
                guard value >= 0 else { throw invalid("must be 0 or more") }
                return value
            }
        }

        /// A port, 0 to 65535.
        var port: Int? {
            get throws(ServeSettings.Invalid) {
                guard let value = try int else { return nil }
                guard (0...65_535).contains(value) else { throw invalid("\(value) is not a port (0 to 65535)") }
                return value
            }
        }

        /// A positive number of seconds.
        var seconds: Duration? {
            get throws(ServeSettings.Invalid) {
                guard let value = try double else { return nil }
                guard value > 0, value.isFinite else { throw invalid("must be a positive number of seconds") }
                return .milliseconds(Int((value * 1000).rounded()))
            }
        }

        /// An error naming the setting by its flag: `--max-pixels must be positive, not 0`.
        func invalid(_ problem: String) -> ServeSettings.Invalid {
            ServeSettings.Invalid(message: "--\(setting.flag) \(problem)")
        }
    }
}

extension ServeSetting {
    /// The setting flags on a command line (`--max-pixels 10`, `--max-pixels=10`, `--dev`, `--allow-source A
    /// --allow-source B`), by file key: a ``Kind/value`` keeps every value given (the last wins when read), a
    /// ``Kind/list`` all of them, a ``Kind/flag`` `["true"]`.
    ///
    /// - Throws: ``ServeSettings/Invalid`` naming an unknown flag (with the nearest known one), a value missing, a
    ///   value given to a flag that takes none, or an argument that is not a flag.
    static func parseFlags(_ arguments: [String]) throws(ServeSettings.Invalid) -> [String: [String]] {
        var values: [String: [String]] = [:]
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ServeSettings.Invalid(message: "unexpected argument \"\(argument)\" (settings are flags: --name value)")
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inline = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            guard let setting = all.first(where: { $0.flag == name }) else {
                let hint = nearest(to: name, among: all.map(\.flag)).map { " (did you mean --\($0)?)" } ?? ""
                throw ServeSettings.Invalid(message: "unknown option --\(name)\(hint)")
            }
            if setting.kind == .flag {
                guard inline == nil else { throw ServeSettings.Invalid(message: "--\(name) takes no value") }
                values[setting.key] = ["true"]
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else {
                guard index < arguments.endIndex else { throw ServeSettings.Invalid(message: "--\(name) needs a value") }
                value = arguments[index]
                index += 1
            }
            values[setting.key, default: []].append(value)
        }
        return values
    }

    /// `--help`'s list of settings: each flag with its value's name, its help, and its variable.
    static var helpText: String {
        all.map { setting in
            let value: String
            switch setting.kind {
            case .value(let name), .list(let name): value = " <\(name)>"
            case .flag: value = ""
            }
            return "  --\(setting.flag)\(value)  [\(setting.environmentName)]\n" + wrapped(setting.help, indent: 6, width: 80)
        }.joined(separator: "\n")
    }

    /// `text` in lines of at most `width` columns, each indented by `indent` spaces (ArgumentParser wraps longer lines
    /// without indenting them).
    private static func wrapped(_ text: String, indent: Int, width: Int) -> String {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, margin.count + line.count + 1 + word.count > width {
                lines.append(margin + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(margin + line) }
        return lines.joined(separator: "\n")
    }

    /// DEPLOYMENT.md's table of settings: flag, variable, file key, meaning.
    static var markdownTable: String {
        var lines = ["| Flag | Environment | Config file key | Meaning |", "|---|---|---|---|"]
        for setting in all {
            let value: String
            switch setting.kind {
            case .value(let name): value = " " + name.uppercased().replacingOccurrences(of: " ", with: "_")
            case .list(let name): value = " " + name.uppercased().replacingOccurrences(of: " ", with: "_") + " (repeatable)"
            case .flag: value = ""
            }
            let help = setting.help.replacingOccurrences(of: "|", with: "\\|")
            lines.append("| `--\(setting.flag)`\(value) | `\(setting.environmentName)` | `\(setting.key)` | \(help) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
