import ArgumentParser
import Foundation
import Magpie

/// The `magpie` command line tool: a thin layer over the Magpie library.
@main
struct MagpieCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "magpie",
        abstract: "Fetch, cache, decode, inspect and convert images with Magpie.",
        version: "magpie \(MagpieBuild.version)",
        subcommands: [
            DemoCommand.self, FetchCommand.self, PrefetchCommand.self, ShowCommand.self, InfoCommand.self,
            ConvertCommand.self, CacheCommand.self, SampleCommand.self, ServeCommand.self,
        ])

    @OptionGroup var global: GlobalOptions

    /// Exit codes: 0 success, 1 some items failed, 2 usage error (ArgumentParser's default is 64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// Writes one line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Encodes `object` as one line of JSON with sorted keys.
func jsonLine(_ object: [String: Any?]) -> String {
    let cleaned = object.mapValues { $0 ?? NSNull() }
    guard let data = try? JSONSerialization.data(withJSONObject: cleaned, options: [.sortedKeys, .withoutEscapingSlashes])
    else { return "{}" }
    return String(decoding: data, as: UTF8.self)
}

/// The processor a `--processor` spec describes (nil without one); a bad spec is a usage error
/// (exit 2) naming the bad part. Shared by `fetch` and `convert`.
func processorOption(_ spec: String?) throws -> (any ImageProcessor)? {
    guard let spec else { return nil }
    do {
        return try ImageProcessorSpec.parse(spec)
    } catch let error as MagpieError {
        guard case .processingFailed(.invalidSpecification(let part, let message)) = error else { throw error }
        throw ValidationError("--processor: bad part \"\(part)\": \(message)")
    }
}

// Package.swift's traits: ArgumentParser and swift-configuration come only with `CLI`.
#if !CLI
#error("The magpie executable needs the package's CLI trait: swift build --enable-all-traits")
#endif
