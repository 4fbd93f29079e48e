import ArgumentParser
import Magpie

@main
struct MagpieCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "magpie", abstract: "Magpie image tool")
    func run() throws {}
}
