/// imgproxy's environment variables (and thumbor's `THUMBOR_SECURITY_KEY`) that `magpie serve` reads, so an imgproxy
/// or thumbor deployment's settings carry over: each
/// is translated into the `MAGPIE_` variable of the same meaning (units converted), which a `MAGPIE_` variable set too
/// overrides. Variables imgproxy has and Magpie does not are listed, to be named in a warning.
enum ImgproxyEnvironment {
    /// The translation of `environment`'s `IMGPROXY_` variables.
    struct Translation {
        /// `MAGPIE_` names and values.
        var variables: [String: String] = [:]
        /// Where each came from: `MAGPIE_X` → `IMGPROXY_Y`.
        var origins: [String: String] = [:]
        /// `IMGPROXY_` variables with no Magpie meaning, sorted.
        var unsupported: [String] = []
    }

    /// Variables Magpie does on its own, so an imgproxy setting of them is accepted as it is: `format:auto` always
    /// answers AVIF or WebP to a client that names them (imgproxy's `AUTO_*` and the older `ENABLE_*_DETECTION`).
    static let alwaysOn: Set<String> = [
        "IMGPROXY_AUTO_WEBP", "IMGPROXY_AUTO_AVIF", "IMGPROXY_ENABLE_WEBP_DETECTION", "IMGPROXY_ENABLE_AVIF_DETECTION",
    ]

    /// Translates `environment`.
    ///
    /// - Throws: ``ServeSettings/Invalid`` for a value Magpie cannot take (a wildcard source pattern, a resolution that
    ///   is not a number, a malformed `IMGPROXY_BIND`).
    static func translate(_ environment: [String: String]) throws -> Translation {
        var result = Translation()
        func set(_ magpie: String, _ value: String, from imgproxy: String) {
            result.variables[magpie] = value
            result.origins[magpie] = imgproxy
        }
        // thumbor keeps its key in thumbor.conf; THUMBOR_SECURITY_KEY is how a container passes it.
        if let key = environment["THUMBOR_SECURITY_KEY"] { set("MAGPIE_THUMBOR_KEY", key, from: "THUMBOR_SECURITY_KEY") }
        for (name, value) in environment where name.hasPrefix("IMGPROXY_") {
            switch name {
            case "IMGPROXY_KEY": set("MAGPIE_KEY", value, from: name)
            case "IMGPROXY_SALT": set("MAGPIE_SALT", value, from: name)
            case "IMGPROXY_BIND":
                // `host:port`, `:port` (every interface) or `[v6]:port`.
                guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]) else {
                    throw ServeSettings.Invalid(message: "IMGPROXY_BIND \"\(value)\" is not HOST:PORT")
                }
                var host = String(value[..<colon])
                if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
                set("MAGPIE_HOST", host.isEmpty ? "0.0.0.0" : host, from: name)
                set("MAGPIE_PORT", String(port), from: name)
            case "IMGPROXY_ALLOWED_SOURCES":
                guard !value.contains("*") else {
                    throw ServeSettings.Invalid(message: "IMGPROXY_ALLOWED_SOURCES: wildcard patterns are not supported; list each prefix")
                }
                set("MAGPIE_ALLOW_SOURCE", value, from: name)
            case "IMGPROXY_MAX_SRC_RESOLUTION":
                guard let megapixels = Double(value), megapixels > 0, megapixels.isFinite else {
                    throw ServeSettings.Invalid(message: "IMGPROXY_MAX_SRC_RESOLUTION \"\(value)\" is not a number of megapixels")
                }
                set("MAGPIE_MAX_PIXELS", String(Int((megapixels * 1_000_000).rounded())), from: name)
            case "IMGPROXY_MAX_SRC_FILE_SIZE":
                // imgproxy's 0 is "no limit"; Magpie keeps its own then.
                if value != "0" { set("MAGPIE_MAX_SOURCE_BYTES", value, from: name) }
            case "IMGPROXY_MAX_RESULT_DIMENSION":
                if value != "0" { set("MAGPIE_MAX_RESULT_DIMENSION", value, from: name) }
            case "IMGPROXY_QUALITY": set("MAGPIE_QUALITY", value, from: name)
            case "IMGPROXY_FORMAT_QUALITY": set("MAGPIE_FORMAT_QUALITY", value, from: name)
            case "IMGPROXY_ENFORCE_AVIF": set("MAGPIE_ENFORCE_AVIF", value, from: name)
            case "IMGPROXY_ENFORCE_WEBP": set("MAGPIE_ENFORCE_WEBP", value, from: name)
            case "IMGPROXY_PRESETS": set("MAGPIE_PRESET", value, from: name)
            case "IMGPROXY_TTL": set("MAGPIE_MAX_AGE", value, from: name)
            case "IMGPROXY_USE_ETAG": set("MAGPIE_ETAG", value, from: name)
            case "IMGPROXY_ALLOW_SECURITY_OPTIONS": set("MAGPIE_ALLOW_SECURITY_OPTIONS", value, from: name)
            case "IMGPROXY_WATERMARK_PATH", "IMGPROXY_WATERMARK_URL": set("MAGPIE_WATERMARK", value, from: name)
            default:
                if !alwaysOn.contains(name) { result.unsupported.append(name) }
            }
        }
        result.unsupported.sort()
        return result
    }
}
