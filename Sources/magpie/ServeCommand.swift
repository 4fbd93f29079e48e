import ArgumentParser
import CMagpieAllocator
import Foundation
import Logging
import MagpieServer

/// `magpie serve`: the image server. Parses flags, layers them over `MAGPIE_…` variables and the `--config` file
/// (flags win, then the environment, then the file), and runs ``ImageServerService``.
struct ServeCommand: AsyncParsableCommand {
    /// `jpeg|png|…|auto`: what `format:` takes, from the coders.
    private static let formatChoices = (ImageCoderRegistry.shared.encodableFormats.map(\.rawValue) + ["auto"]).joined(separator: "|")

    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve images over HTTP with imgproxy-style signed URLs: /SIGNATURE/OPTION/.../plain/SOURCE[@ext].",
        discussion: """
            Every setting can also come from the environment (MAGPIE_ and the option's name in capitals with \
            underscores: --max-source-bytes is MAGPIE_MAX_SOURCE_BYTES; lists are comma-separated) or from the JSON \
            file given by --config (keys in camelCase: {"maxSourceBytes": "20MB", "allowSource": ["https://cdn/"]}). \
            Flags win over the environment, which wins over the file. An unknown key or MAGPIE_ variable is an error.

            Signing keys: MAGPIE_KEY and MAGPIE_SALT (hex; comma-separated pairs rotate keys), or --key-file PATH with \
            one KEY:SALT line per pair, mode 600. --key/--salt work too, but every local user sees them in ps.

            URL options, one per path segment: any processor of `magpie convert --processor` (resize:256x256:fit, \
            crop:..., round:12, blur:2, ...), format:\(formatChoices), quality:N, metadata:none|keep|strip, color:keep|srgb, \
            preset:NAME, frames:first|all.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on; 0 picks a free one (default 8080).") var port: Int?
    @Option(name: .customLong("cache-dir"), help: "Folder for source bytes and results (default: magpie-serve in the temporary folder).")
    var cacheDirectory: String?
    @Option(help: "JSON configuration file (keys in camelCase).") var config: String?

    @Option(name: .customLong("key-file"), help: "File of signing keys, one KEY:SALT line (hex) per pair, readable by its owner only.")
    var keyFile: String?
    @Option(name: .customLong("key"), help: "Signing key in hex, repeatable (visible in ps: prefer MAGPIE_KEY or --key-file).")
    var keys: [String] = []
    @Option(name: .customLong("salt"), help: "Signing salt in hex, one per --key (prefer MAGPIE_SALT or --key-file).")
    var salts: [String] = []
    @Option(name: .customLong("thumbor-key"), help: "thumbor's SECURITY_KEY, for thumbor's signed URLs (prefer THUMBOR_SECURITY_KEY or MAGPIE_THUMBOR_KEY).")
    var thumborKey: String?
    @Flag(name: .customLong("insecure-unsigned"), help: "Accept unsigned URLs (signature '_', 'insecure' or thumbor's 'unsafe'). Never in production.")
    var insecureUnsigned = false

    @Option(name: .customLong("allow-source"), help: "Only sources starting with this prefix (repeatable); redirects are checked too.")
    var allowSource: [String] = []
    @Option(name: .customLong("allow-network"), help: "Allow sources in this CIDR even if internal (repeatable), e.g. 10.0.0.0/8.")
    var allowNetwork: [String] = []
    @Option(name: .customLong("local-root"), help: "Serve local:///path sources from this folder (no symlinks out of it).")
    var localRoot: String?

    @Option(name: .customLong("max-source-bytes"), help: "Largest source, e.g. 50MB (default 50MB).") var maxSourceBytes: ByteCount?
    @Option(name: .customLong("max-pixels"), help: "Most pixels per frame of a source, from its header (default 50000000).")
    var maxPixels: Int?
    @Option(name: .customLong("max-frames"), help: "Most frames in an animated source (default 1000).") var maxFrames: Int?
    @Option(name: .customLong("max-result-dimension"), help: "Most pixels along either side of a result (default 16384).")
    var maxResultDimension: Int?
    @Option(name: .customLong("max-working-memory"), help: "Most memory one processing step of a job may use, e.g. 512MB (default 1GiB).")
    var maxWorkingMemory: ByteCount?
    @Option(name: .customLong("max-options"), help: "Most option segments in one URL, presets expanded (default 64).")
    var maxOptions: Int?
    @Option(name: .customLong("download-timeout"), help: "Seconds a source download may take (default 10).") var downloadTimeout: Double?
    @Option(name: .customLong("processing-timeout"), help: "Seconds a job may wait for a worker, and may take (default 20).")
    var processingTimeout: Double?
    @Option(help: "Processing jobs at once (default: the number of cores).") var workers: Int?
    @Option(help: "Jobs waiting for a worker before requests get 429 (default 8 x workers).") var queue: Int?

    @Option(name: .customLong("max-age"), help: "Cache-Control max-age of images, in seconds (default 31536000, one year).")
    var maxAge: Int?
    @Option(name: .customLong("disk-cache-size"), help: "Disk budget for sources and results (default 2GiB).") var diskCacheSize: ByteCount?
    @Option(name: .customLong("memory-cache-size"), help: "Memory for encoded results (default 128MiB).") var memoryCacheSize: ByteCount?
    @Option(name: .customLong("preset"), help: "A named option list: NAME=option/option/... (repeatable); used as preset:NAME.")
    var presets: [String] = []
    @Option(name: .customLong("shutdown-timeout"), help: "Seconds requests in flight get to finish on SIGTERM/SIGINT (default 30).")
    var shutdownTimeout: Double?
    @Option(name: .customLong("drain-delay"), help: "Seconds /ready answers 503 after SIGTERM while requests are still served (default 0).")
    var drainDelay: Double?
    @Option(name: .customLong("idle-timeout"), help: "Seconds an idle keep-alive connection stays open (default 75).")
    var idleTimeout: Double?
    @Option(name: .customLong("header-timeout"), help: "Seconds a request head may take from its first byte (default 10).")
    var headerTimeout: Double?
    @Option(name: .customLong("metrics-port"), help: "Serve /metrics on this port instead of the main one.") var metricsPort: Int?
    @Option(name: .customLong("metrics-host"), help: "Address of the --metrics-port listener (default: --host).") var metricsHost: String?
    @Flag(help: "Serve a page at / that builds signed URLs and shows results and metrics (development only).")
    var dev = false
    @Flag(name: .customLong("no-access-log"), help: "Do not log one line per image request (when a proxy in front logs them).")
    var noAccessLog = false
    @Option(name: .customLong("access-log-format"), help: "text (through the log), json, common or combined (default text).")
    var accessLogFormat: String?
    @Option(help: "Quality of lossy results when the URL gives none (default: imgproxy's, 80; WebP 79, AVIF 63, JPEG XL 77).")
    var quality: Int?
    @Option(name: .customLong("format-quality"), help: "Qualities per format, e.g. jpeg=70,avif=40 (imgproxy's IMGPROXY_FORMAT_QUALITY).")
    var formatQuality: String?
    @Flag(name: .customLong("enforce-avif"), help: "Answer AVIF to clients that accept it even when the URL names another format.")
    var enforceAvif = false
    @Flag(name: .customLong("enforce-webp"), help: "Answer WebP to clients that accept it even when the URL names another format.")
    var enforceWebp = false
    @Flag(name: .customLong("no-etag"), help: "Send no ETag (imgproxy's IMGPROXY_USE_ETAG=false).") var noETag = false
    @Option(help: "Watermark image (a file or an http(s) URL, read once) for imgproxy's watermark option.") var watermark: String?
    @Option(name: .customLong("face-model"), help: "OpenCV cascade model smart crops look for faces with, or none (default: opencv-data's lbpcascade_frontalface.xml; thumbor's is haarcascade_frontalface_alt.xml).")
    var faceModel: String?
    @Option(name: .customLong("face-budget"), help: "Seconds a smart crop waits for face detection before it uses attention (default 0.3).")
    var faceBudget: Double?
    @Flag(name: .customLong("allow-security-options"), help: "Let URLs set max_src_resolution, max_src_file_size and max_animation_frames.")
    var allowSecurityOptions = false
    @Flag(name: .customLong("print-config"), help: "Print the settings in effect and where each came from, then exit.")
    var printConfig = false

    /// The long flags given on the command line (for `--print-config`'s origins).
    var givenFlags: Set<String> {
        Set(CommandLine.arguments.filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2).prefix { $0 != "=" }) })
    }

    func run() async throws {
        global.bootstrapLogging(floor: .info)
        // Before the first image: large buffers then go back to the kernel when freed (RSS stays flat under load).
        AllocatorPolicy.returnLargeBlocksToTheSystem()
        let settings: ServeSettings
        do {
            settings = try await ServeSettings(command: self)
        } catch let error as ServeSettings.Invalid {
            throw ValidationError(error.message)
        }
        if printConfig {
            print(settings.printedConfiguration(), terminator: "")
            return
        }
        let logger = Logger(label: "magpie.serve")
        if !settings.unsupportedImgproxyVariables.isEmpty {
            logger.warning("imgproxy settings Magpie does not have are ignored", metadata: [
                "variables": "\(settings.unsupportedImgproxyVariables.joined(separator: ", "))",
            ])
        }
        if !keys.isEmpty {
            logger.warning("signing keys given with --key are visible to every local user in ps; use MAGPIE_KEY/MAGPIE_SALT or --key-file")
        }
        let server: ImageServer
        do {
            server = try ImageServer(configuration: settings.server, logger: logger)
        } catch let error as ImageServerConfigurationError {
            throw ValidationError(error.message)
        }
        var service = ImageServerService(server: server)
        service.host = settings.host
        service.port = settings.port
        service.shutdownTimeout = settings.shutdownTimeout
        service.drainDelay = settings.drainDelay
        service.idleTimeout = settings.idleTimeout
        service.headTimeout = settings.headTimeout
        service.metricsAddress = settings.metricsAddress
        service.logger = logger
        // glibc's malloc needs malloc_trim on a timer to give its arenas' free pages back; jemalloc, which this
        // executable links (Package.swift), does it on a thread of its own, and a sanitizer's allocator ignores it.
        let allocator = AllocatorPolicy.activeAllocator
        service.freeMemoryReleaseInterval = allocator == .glibc ? .seconds(10) : nil
        if allocator == .jemalloc {
            let overridden = ProcessInfo.processInfo.environment["MALLOC_CONF"].map { ", then MALLOC_CONF \($0)" } ?? ""
            logger.info("memory allocator", metadata: [
                "allocator": "jemalloc", "settings": "\(String(cString: mg_allocator_settings()))\(overridden)",
            ])
        } else {
            logger.info("memory allocator", metadata: ["allocator": "\(allocator.rawValue)"])
        }
        service.onListening = { host, port in
            // Unbuffered: a supervisor or test waiting for the line gets it at once, even through a pipe.
            FileHandle.standardOutput.write(Data("listening on http://\(ImageServerService.shown(host, port))\n".utf8))
        }
        service.onMetricsListening = { host, port in
            logger.info("metrics on http://\(ImageServerService.shown(host, port))/metrics")
        }
        do {
            try await service.run()
        } catch let error as ImageServerServiceError {
            throw ServeFailure(message: error.description)
        }
    }
}

/// A failure of the running server (an address it cannot listen on): printed as one line, exit status 1.
struct ServeFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
