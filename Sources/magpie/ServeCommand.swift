import ArgumentParser
import CMagpieAllocator
import Foundation
import Logging
import MagpieAllocatorPolicy
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

            SETTINGS:
            \(ServeSetting.helpText)
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "JSON configuration file (keys in camelCase).") var config: String?
    @Flag(name: .customLong("print-config"), help: "Print the settings in effect and where each came from, then exit.")
    var printConfig = false

    /// Every other flag: the settings, declared in ``ServeSetting/all`` and parsed by ``ServeSetting/parseFlags(_:)``.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The settings listed above.", visibility: .hidden))
    var settingArguments: [String] = []

    func run() async throws {
        global.bootstrapLogging(floor: .info)
        // Before the first image: large buffers then go back to the kernel when freed (RSS stays flat under load).
        AllocatorPolicy.returnLargeBlocksToTheSystem()
        let settings: ServeSettings
        let flags: [String: [String]]
        do {
            flags = try ServeSetting.parseFlags(settingArguments)
            settings = try await ServeSettings(flags: flags, configPath: config)
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
        if flags["key"] != nil {
            logger.warning("signing keys given with --key are visible to every local user in ps; use MAGPIE_KEY/MAGPIE_SALT or --key-file")
        }
        // Before the server makes its downloader and caches, whose instruments keep the factory they were made with.
        let libraryMetrics = LibraryMetrics.registry
        let server: ImageServer
        do {
            server = try ImageServer(configuration: settings.server, logger: logger)
        } catch let error as ImageServerConfigurationError {
            throw ValidationError(error.message)
        }
        server.metrics.include(libraryMetrics)
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
        service.releaseFreeMemory = { AllocatorPolicy.releaseFreeMemory() }
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
