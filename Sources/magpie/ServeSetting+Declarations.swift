import Foundation
import MagpieServer

/// Every setting of `magpie serve`, in the order `--help`, `--print-config` and DEPLOYMENT.md list them and the order
/// they are read in (a setting read after another may use it: `--metrics-port` takes `--host`). A new setting is one
/// declaration here plus its use in `ImageServerConfiguration` or the service.
extension ServeSetting {
    static let all: [ServeSetting] = listening + signing + sources + limits + caching + output + faces + lifecycle + operations

    private static func seconds(_ duration: Duration) -> String {
        DecimalText.format(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    /// A setting that sets one field when a layer gives it: a whole number above 0.
    private static func count(
        _ key: String, _ field: WritableKeyPath<ServeSettings, Int> & Sendable, help: String
    ) -> ServeSetting {
        ServeSetting(key, .value("n"), help: help, apply: { s, r in if let value = try r.positive { s[keyPath: field] = value } },
            shown: { String($0[keyPath: field]) })
    }

    /// A setting that sets one field when a layer gives it: a size (`50MB`).
    private static func size(
        _ key: String, _ field: WritableKeyPath<ServeSettings, Int> & Sendable, help: String
    ) -> ServeSetting {
        ServeSetting(key, .value("size"), help: help, apply: { s, r in if let value = try r.bytes { s[keyPath: field] = value } },
            shown: { String($0[keyPath: field]) })
    }

    /// A setting that sets one field when a layer gives it: a positive number of seconds.
    private static func duration(
        _ key: String, _ field: WritableKeyPath<ServeSettings, Duration> & Sendable, help: String
    ) -> ServeSetting {
        ServeSetting(key, .value("seconds"), help: help, apply: { s, r in if let value = try r.seconds { s[keyPath: field] = value } },
            shown: { seconds($0[keyPath: field]) })
    }

    static let host = ServeSetting("host", .value("address"), help: "Address to listen on (default 127.0.0.1).",
        apply: { s, r in s.host = r.string ?? s.host }, shown: { $0.host })

    private static let listening: [ServeSetting] = [
        host,
        ServeSetting("port", .value("port"), help: "Port to listen on; 0 picks a free one (default 8080).",
            apply: { s, r in s.port = try r.port ?? s.port }, shown: { String($0.port) }),
        ServeSetting("cacheDir", .value("folder"), help: "Folder for source bytes and results (default: magpie-serve in the temporary folder).",
            apply: { s, r in s.server.cacheDirectory = r.string.map { URL(fileURLWithPath: $0) } },
            shown: { $0.server.cacheDirectory?.path ?? "(temporary folder)" }),
    ]

    static let keyFile = ServeSetting("keyFile", .value("path"),
        help: "File of signing keys, one KEY:SALT line (hex) per pair, readable by its owner only.",
        apply: { _, _ in }, shown: { $0.origins["keyFile"] == nil ? "" : "(set)" })
    static let salt = ServeSetting("salt", .list("hex"), secret: true, help: "Signing salt in hex, one per --key (prefer MAGPIE_SALT or --key-file).",
        apply: { _, _ in }, shown: { "\($0.server.signingKeys.count) salt(s)" })

    private static let signing: [ServeSetting] = [
        keyFile,
        // Read after --key-file's and --salt's declarations: one pass turns all three into the key pairs.
        ServeSetting("key", .list("hex"), secret: true,
            help: "Signing key in hex, repeatable (visible in ps: prefer MAGPIE_KEY or --key-file).",
            apply: { s, r in s.server.signingKeys = try ServeSettings.signingKeys(keys: r, salts: r.other(salt), file: r.other(keyFile)) },
            shown: { "\($0.server.signingKeys.count) key(s)" }),
        salt,
        ServeSetting("thumborKey", .value("text"), secret: true,
            help: "thumbor's SECURITY_KEY, for thumbor's signed URLs (prefer THUMBOR_SECURITY_KEY or MAGPIE_THUMBOR_KEY).",
            apply: { s, r in s.server.thumborSecurityKey = r.string }, shown: { $0.server.thumborSecurityKey == nil ? "" : "(set)" }),
        ServeSetting("insecureUnsigned", .flag,
            help: "Accept unsigned URLs (signature '_', 'insecure' or thumbor's 'unsafe'). Never in production.",
            apply: { s, r in s.server.allowsUnsigned = r.bool == true }, shown: { String($0.server.allowsUnsigned) }),
    ]

    private static let sources: [ServeSetting] = [
        ServeSetting("allowSource", .list("prefix"), help: "Only sources starting with this prefix (repeatable); redirects are checked too.",
            apply: { s, r in s.server.allowedSourcePrefixes = r.strings }, shown: { $0.server.allowedSourcePrefixes.joined(separator: ",") }),
        ServeSetting("allowNetwork", .list("cidr"), help: "Allow sources in this CIDR even if internal (repeatable), e.g. 10.0.0.0/8.",
            apply: { s, r in s.server.allowedNetworks = r.strings }, shown: { $0.server.allowedNetworks.joined(separator: ",") }),
        ServeSetting("localRoot", .value("folder"), help: "Serve local:///path sources from this folder (no symlinks out of it).",
            apply: { s, r in s.server.localRoot = r.string }, shown: { $0.server.localRoot ?? "" }),
    ]

    private static let limits: [ServeSetting] = [
        size("maxSourceBytes", \.server.maximumSourceBytes, help: "Largest source, e.g. 50MB (default 50MB)."),
        count("maxPixels", \.server.maximumPixels, help: "Most pixels per frame of a source, from its header (default 50000000)."),
        count("maxFrames", \.server.maximumFrames, help: "Most frames in an animated source (default 1000)."),
        count("maxResultDimension", \.server.maximumResultDimension, help: "Most pixels along either side of a result (default 16384)."),
        size("maxWorkingMemory", \.server.maximumWorkingMemory,
            help: "Most memory one processing step of a job may use, e.g. 512MB (default 1GiB)."),
        count("maxOptions", \.server.maximumOptions, help: "Most option segments in one URL, presets expanded (default 64)."),
        duration("downloadTimeout", \.server.downloadTimeout, help: "Seconds a source download may take (default 10)."),
        duration("processingTimeout", \.server.processingTimeout, help: "Seconds a job may wait for a worker, and may take (default 20)."),
        count("workers", \.server.workers, help: "Processing jobs at once (default: the number of cores)."),
        ServeSetting("queue", .value("n"), help: "Jobs waiting for a worker before requests get 429 (default 8 x workers).",
            apply: { s, r in if let queue = try r.nonNegative { s.server.queueLength = queue } },
            shown: { String($0.server.effectiveQueueLength) }),
    ]

    private static let caching: [ServeSetting] = [
        ServeSetting("maxAge", .value("seconds"), help: "Cache-Control max-age of images, in seconds (default 31536000, one year).",
            apply: { s, r in if let age = try r.nonNegative { s.server.maxAge = .seconds(age) } },
            shown: { String($0.server.maxAge.components.seconds) }),
        size("diskCacheSize", \.server.diskCacheSize, help: "Disk budget for sources and results (default 2GiB)."),
        size("memoryCacheSize", \.server.memoryCacheSize, help: "Memory for encoded results (default 128MiB)."),
        ServeSetting("preset", .list("name=options"), help: "A named option list: NAME=option/option/... (repeatable); used as preset:NAME.",
            apply: { s, r in
                for preset in r.strings {
                    guard let equals = preset.firstIndex(of: "="), equals != preset.startIndex else {
                        throw r.invalid("\"\(preset)\": expected NAME=option/option/...")
                    }
                    s.server.presets[String(preset[..<equals])] = preset[preset.index(after: equals)...].split(separator: "/").map(String.init)
                }
            },
            shown: { s in s.server.presets.keys.sorted().map { "\($0)=\(s.server.presets[$0]!.joined(separator: "/"))" }.joined(separator: ",") }),
    ]

    private static let output: [ServeSetting] = [
        ServeSetting("quality", .value("n"), help: "Quality of lossy results when the URL gives none (default: each format's, as imgproxy's: "
            + defaultQualities + ").",
            apply: { s, r in
                guard let quality = try r.int else { return }
                guard (1...100).contains(quality) else { throw r.invalid("must be within 1...100, not \(quality)") }
                s.server.defaultQuality = quality
            },
            shown: { $0.server.defaultQuality.map(String.init) ?? "each format's (\(defaultQualities))" }),
        ServeSetting("formatQuality", .value("list"), help: "Qualities per format, e.g. jpeg=70,avif=40 (imgproxy's IMGPROXY_FORMAT_QUALITY).",
            apply: { s, r in
                let text = r.strings.joined(separator: ",")
                if !text.isEmpty { s.server.formatQuality = try ServeSettings.formatQualities(text) }
            },
            shown: { s in s.server.formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: ",") }),
        ServeSetting("enforceAvif", .flag, help: "Answer AVIF to clients that accept it even when the URL names another format.",
            apply: { s, r in if r.bool == true { s.server.enforcedFormats.append(.avif) } },
            shown: { String($0.server.enforcedFormats.contains(.avif)) }),
        ServeSetting("enforceWebp", .flag, help: "Answer WebP to clients that accept it even when the URL names another format.",
            apply: { s, r in if r.bool == true { s.server.enforcedFormats.append(.webp) } },
            shown: { String($0.server.enforcedFormats.contains(.webp)) }),
        // The flag turns ETags off; the environment and the file say whether they are on (imgproxy's IMGPROXY_USE_ETAG).
        ServeSetting("etag", flag: "no-etag", .flag, help: "Send no ETag (imgproxy's IMGPROXY_USE_ETAG=false).",
            apply: { s, r in s.server.sendsETag = !r.isFlagged && r.layers.bool("etag") != false }, shown: { String($0.server.sendsETag) }),
        ServeSetting("watermark", .value("file or URL"), help: "Watermark image (a file or an http(s) URL, read once) for imgproxy's watermark option.",
            apply: { s, r in if let location = r.string { s.server.watermark = try await ServeSettings.watermark(location) } },
            shown: { $0.server.watermark.map { "\($0.count) bytes" } ?? "" }),
        ServeSetting("allowSecurityOptions", .flag, help: "Let URLs set max_src_resolution, max_src_file_size and max_animation_frames.",
            apply: { s, r in s.server.allowsSecurityOptions = r.bool == true }, shown: { String($0.server.allowsSecurityOptions) }),
    ]

    /// `jpeg 80, webp 79, …`: the encoders' default qualities, from the coders' traits.
    private static var defaultQualities: String {
        ImageCoderRegistry.shared.encodableFormats.compactMap { f in f.traits.defaultQuality.map { "\(f.rawValue) \($0)" } }
            .joined(separator: ", ")
    }

    private static let faces: [ServeSetting] = [
        ServeSetting("faceModel", .value("path"),
            help: "OpenCV cascade model smart crops look for faces with, or none (default: opencv-data's lbpcascade_frontalface.xml; thumbor's is haarcascade_frontalface_alt.xml).",
            apply: { s, r in
                guard let model = r.string else { return }
                // Named on purpose, so a wrong path is a start-up error, not a quiet "no faces" at the first smart crop.
                guard model == "none" || FileManager.default.isReadableFile(atPath: model) else {
                    throw r.invalid("\"\(model)\" is not a readable file (or none)")
                }
                s.server.faceDetection = model == "none" ? nil : s.server.faceDetection.map { var faces = $0; faces.modelPath = model; return faces }
            },
            shown: { $0.server.faceDetection?.modelPath ?? "none" }),
        ServeSetting("faceBudget", .value("seconds"), help: "Seconds a smart crop waits for face detection before it uses attention (default 0.3).",
            apply: { s, r in if let budget = try r.seconds { s.server.faceDetection?.budget = budget } },
            shown: { $0.server.faceDetection.map { seconds($0.budget) } ?? "" }),
    ]

    private static let lifecycle: [ServeSetting] = [
        duration("shutdownTimeout", \.shutdownTimeout, help: "Seconds requests in flight get to finish on SIGTERM/SIGINT (default 30)."),
        ServeSetting("drainDelay", .value("seconds"), help: "Seconds /ready answers 503 after SIGTERM while requests are still served (default 0).",
            apply: { s, r in
                guard let drain = try r.double else { return }
                guard drain >= 0, drain.isFinite else { throw r.invalid("must be 0 or more seconds") }
                s.drainDelay = .milliseconds(Int((drain * 1000).rounded()))
            },
            shown: { seconds($0.drainDelay) }),
        duration("idleTimeout", \.idleTimeout, help: "Seconds an idle keep-alive connection stays open (default 75)."),
        duration("headerTimeout", \.headTimeout, help: "Seconds a request head may take from its first byte (default 10)."),
    ]

    static let metricsHost = ServeSetting("metricsHost", .value("address"), help: "Address of the --metrics-port listener (default: --host).",
        apply: { _, _ in }, shown: { $0.metricsAddress?.host ?? "" })

    private static let operations: [ServeSetting] = [
        ServeSetting("dev", .flag, help: "Serve a page at / that builds signed URLs and shows results and metrics (development only).",
            apply: { s, r in s.server.developmentPage = r.bool == true }, shown: { String($0.server.developmentPage) }),
        ServeSetting("noAccessLog", .flag, help: "Do not log one line per image request (when a proxy in front logs them).",
            apply: { s, r in s.server.accessLog = r.bool != true }, shown: { String(!$0.server.accessLog) }),
        ServeSetting("accessLogFormat", .value("format"), help: "text (through the log), json, common or combined (default text).",
            apply: { s, r in
                guard let format = r.string else { return }
                guard let parsed = AccessLogFormat(rawValue: format) else {
                    throw r.invalid("\"\(format)\" is not one of \(AccessLogFormat.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                s.server.accessLogFormat = parsed
            },
            shown: { $0.server.accessLogFormat.rawValue }),
        metricsHost,
        // After --host and --metrics-host: the listener's address defaults to the main one's.
        ServeSetting("metricsPort", .value("port"), help: "Serve /metrics on this port instead of the main one.",
            apply: { s, r in
                let host = r.other(metricsHost).string
                if let port = try r.port {
                    s.metricsAddress = (host ?? s.host, port)
                } else if host != nil {
                    throw ServeSettings.Invalid(message: "--metrics-host needs --metrics-port")
                }
            },
            shown: { $0.metricsAddress.map { String($0.port) } ?? "" }),
    ]
}
