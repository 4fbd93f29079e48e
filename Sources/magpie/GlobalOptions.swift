import ArgumentParser
import Foundation
import Logging
import Magpie

/// Options every subcommand accepts: how much to log, whether to colour. Where the caches live is
/// ``CacheFolderOptions``, on the commands that use a cache only.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Log the library's work to stderr: -v info, -vv debug, -vvv trace.")
    var verbose: Int

    @Flag(name: .customLong("no-color"), help: "Plain text: no ANSI colours (also when NO_COLOR is set or output is not a terminal).")
    var noColor = false

    /// The CLI's downloader: `timeout` seconds per download, body included; `concurrency` parallel
    /// downloads overall and per host when given (the library's defaults otherwise); transient
    /// failures retried by `retry` (none when nil).
    func makeDownloader(timeout: Double, concurrency: Int? = nil, retry: (any RetryStrategy)? = nil) -> ImageDownloader {
        var configuration = ImageDownloader.Configuration()
        configuration.downloadTimeout = .milliseconds(Int(timeout * 1000))
        configuration.retryStrategy = retry
        if let concurrency {
            configuration.maximumConcurrentDownloads = concurrency
            configuration.maximumConcurrentDownloadsPerHost = concurrency
        }
        return ImageDownloader(name: "cli", configuration: configuration)
    }

    /// The log level `--verbose` asks for; errors only without it.
    var logLevel: Logger.Level {
        switch verbose {
        case 0: .error
        case 1: .info
        case 2: .debug
        default: .trace
        }
    }

    /// Routes swift-log to stderr at the chosen level. Call once, first thing in `run()`, before any
    /// library object (they create their loggers when they are made). `floor` is the least a command logs
    /// (`serve` logs its access lines at info without `-v`).
    func bootstrapLogging(floor: Logger.Level? = nil) {
        let level = floor.map { Swift.min($0, logLevel) } ?? logLevel
        LoggingBootstrap.once {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }

    /// Whether to colour what goes to `stream`: a terminal, no `--no-color`, no `NO_COLOR`, `TERM` not `dumb`.
    func usesColor(on stream: Terminal.Stream) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        guard !noColor, environment["NO_COLOR"].map({ $0.isEmpty }) ?? true, environment["TERM"] != "dumb" else { return false }
        return Terminal.isTTY(stream)
    }

    /// ANSI styling for `stream`, switched off when colour is not wanted there.
    func style(for stream: Terminal.Stream) -> TextStyle {
        TextStyle(enabled: usesColor(on: stream))
    }
}

/// `LoggingSystem.bootstrap` may run only once per process.
private enum LoggingBootstrap {
    nonisolated(unsafe) private static var done = false
    private static let lock = NSLock()

    static func once(_ body: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        guard !done else { return }
        done = true
        body()
    }
}
