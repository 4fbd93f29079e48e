/// Every setting `magpie serve` takes from the `--config` JSON file (by its camelCase key) and from the environment
/// (`MAGPIE_` and the key in capitals with underscores): declared once, so lookups, the check for unknown keys and the
/// suggestions for misspelt ones all come from this list.
enum ServeSettingKey: String, CaseIterable {
    case host, port, cacheDir, keyFile, key, salt, thumborKey, insecureUnsigned
    case allowSource, allowNetwork, localRoot
    case maxSourceBytes, maxPixels, maxFrames, maxResultDimension, maxWorkingMemory, maxOptions
    case downloadTimeout, processingTimeout, workers, queue
    case maxAge, diskCacheSize, memoryCacheSize, preset
    case quality, formatQuality, enforceAvif, enforceWebp, etag, watermark, allowSecurityOptions
    case faceModel, faceBudget
    case shutdownTimeout, drainDelay, idleTimeout, headerTimeout
    case dev, noAccessLog, accessLogFormat, metricsHost, metricsPort

    /// `MAGPIE_MAX_SOURCE_BYTES` for `maxSourceBytes`.
    var environmentName: String {
        var name = "MAGPIE_"
        for character in rawValue {
            if character.isUppercase { name += "_" }
            name += character.uppercased()
        }
        return name
    }

    /// The command-line flag: the key in kebab-case (`maxSourceBytes` → `max-source-bytes`).
    var flagName: String {
        var name = ""
        for character in rawValue {
            if character.isUppercase { name += "-" }
            name += character.lowercased()
        }
        return self == .etag ? "no-etag" : name
    }

    /// `MAGPIE_` variables that are Magpie's but not serve settings: the config file's path, and those the sanitizer
    /// builds, the benchmarks and the test suites read (a developer's shell may export them).
    static let otherEnvironmentNames: Set<String> = [
        "MAGPIE_CONFIG", "MAGPIE_TSAN_LOCKS", "MAGPIE_CORPUS", "MAGPIE_CONFORMANCE_FORMAT", "MAGPIE_BENCH_RATIOS",
        "MAGPIE_SERVED",
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
