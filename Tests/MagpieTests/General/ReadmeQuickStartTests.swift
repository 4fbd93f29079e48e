import Dispatch
import Foundation
import MagpieOrigin
import Testing

import Magpie

/// The README's quick start, copied here with a local origin, its own manager and its own cache folder
/// (so it neither touches the network nor the user's cache): it must compile and do what the README says.
struct ReadmeQuickStartTests {
    /// The package's root folder (this file is Tests/MagpieTests/General/…).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The Swift code blocks of the README, in order.
    static func readmeSwiftBlocks() throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        return text.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
    }

    @Test(arguments: [(0, "Examples/QuickStart/main.swift"), (1, "Examples/KingfisherHabits/main.swift")])
    func readmeSnippetsAreTheCompiledExamplesVerbatim(block: Int, path: String) throws {
        let example = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
        let blocks = try Self.readmeSwiftBlocks()
        #expect(blocks.count > block && blocks[block] + "\n" == example, "README's swift block \(block) must be \(path) as it is")
    }

    @Test func theQuickStartExampleRunsAgainstALocalOriginAndTheSecondRunHitsTheDisk() async throws {
        let origin = try await OriginFixture.start()
        defer { Task { await origin.stop() } }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let executable = try BuiltProducts.executable("magpie-quickstart")
        /// Runs the example off the cooperative pool: the origin serves from this process, and a blocked pool
        /// thread (of two) starves it and every other network test.
        func run() async throws -> (status: Int32, output: String) {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result {
                        let process = Process()
                        process.executableURL = executable
                        process.arguments = [origin.url("/img/pic.png")]
                        process.currentDirectoryURL = folder
                        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": folder.path]) { $1 }
                        let pipe = Pipe()
                        process.standardOutput = pipe
                        try process.run()
                        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                        process.waitUntilExit()
                        return (process.terminationStatus, output)
                    })
                }
            }
        }
        let first = try await run()
        #expect(first.status == 0)
        #expect(first.output == "256 192 none\nmemory\n", "the 64x48 fixture fitted into 256x256")
        let thumbnail = try ImageCoderRegistry.shared.decode(Data(contentsOf: folder.appendingPathComponent("thumbnail.png")))
        #expect(thumbnail.pixelSize == PixelSize(width: 256, height: 192))
        #expect(thumbnail.frames[0].pixels[0, 0].alpha == 0, "rounded corner")
        // The process exited right after its retrieval: its disk write was still saved.
        let second = try await run()
        #expect(second.output == "256 192 disk\nmemory\n")
        #expect(origin.requestCount(path: "/img/pic.png") == 1)
    }

    @Test func readmeMagpieCoreThumbnailSnippetMakesA256PixelJPEG() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("photo.jpg")
        try ImageCoderRegistry.shared.encode(Image(pixels: TestImages.gradient(width: 1024, height: 768)), as: .jpeg).write(to: photo)
        let out = folder.appendingPathComponent("thumb.jpg")

        let data = try Data(contentsOf: photo)
        let thumb = try DownsamplingImageProcessor(size: PixelSize(width: 256, height: 256))
            .process(item: .data(data), context: .default)!
        try ImageCoderRegistry.shared.encode(thumb, as: .jpeg).write(to: out)

        let written = try ImageCoderRegistry.shared.decode(try Data(contentsOf: out))
        #expect(written.format == .jpeg)
        #expect(written.pixelSize == PixelSize(width: 256, height: 192))
    }
}
