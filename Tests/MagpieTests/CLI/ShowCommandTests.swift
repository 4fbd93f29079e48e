import Foundation
import MagpieOrigin
import Testing

@testable import Magpie
@testable import MagpieCore

/// `magpie show` as a subprocess: exact half-block escapes under a pseudo-terminal, the ASCII ramp
/// without colour, the spinner during a slow download, animation in place, failures and `--json`.
struct ShowCommandTests {
    static let escape = "\u{1B}"

    /// 4×3: a red row (its last pixel fully transparent), a blue row, then white, white, black, black.
    static let knownPNG: Data = {
        let red: [UInt8] = [255, 0, 0, 255], blue: [UInt8] = [0, 0, 255, 255], clear: [UInt8] = [0, 0, 0, 0]
        let white: [UInt8] = [255, 255, 255, 255], black: [UInt8] = [0, 0, 0, 255]
        let rows = [red + red + red + clear, blue + blue + blue + blue, white + white + black + black]
        return try! ImageCoderRegistry.shared.encode(try! Image(width: 4, height: 3, rgba: rows.flatMap { $0 }), as: .png)
    }()

    /// 4×4 GIF of three solid frames (red, green, blue), 20 ms each.
    static let threeFrameGIF: Data = {
        let colors: [RGBAColor] = [RGBAColor(red: 255, green: 0, blue: 0), RGBAColor(red: 0, green: 255, blue: 0), RGBAColor(red: 0, green: 0, blue: 255)]
        let frames = colors.map { ImageFrame(pixels: try! PixelBuffer(width: 4, height: 4, fill: $0), duration: .milliseconds(20)) }
        return try! ImageCoderRegistry.shared.encode(try! Image(frames: frames, loopCount: 0), as: .gif)
    }()

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-show-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `magpie` with pipes, off the cooperative pool (an origin may serve from this process).
    func piped(_ arguments: [String]) async throws -> ProcessRun {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try ProcessRun.built("magpie", arguments) }) }
        }
    }

    /// Runs `magpie` on a pseudo-terminal `columns` wide; with `quietStderr` its stderr goes to
    /// /dev/null instead (no spinner), so the capture holds only what was drawn on stdout.
    func terminal(
        _ arguments: [String], columns: Int = 80, quietStderr: Bool = false, environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String) {
        let executable = try BuiltProducts.executable("magpie")
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    guard quietStderr else {
                        return try PseudoTerminal.run(executable, arguments, columns: columns, environment: environment)
                    }
                    let words = ([executable.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
                    return try PseudoTerminal.run(
                        URL(fileURLWithPath: "/bin/sh"), ["-c", "exec \(words.joined(separator: " ")) 2>/dev/null"],
                        columns: columns, environment: environment)
                })
            }
        }
    }

    /// The drawn lines of a terminal capture (the pty ends lines with CR LF).
    func lines(_ output: String) -> [String] {
        output.components(separatedBy: "\r\n").filter { !$0.isEmpty }
    }

    func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func halfBlocksCarryExactColoursAndTheASCIIRampReplacesThemWithoutColour() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("known.png")
        try Self.knownPNG.write(to: file)
        let common = ["show", "--cache-dir", folder.path, "--width", "4", file.path]
        let e = Self.escape

        let colored = try await terminal(common, quietStderr: true)
        #expect(colored.status == 0)
        // Colours are set only when they change; a transparent top half draws the bottom with ▄;
        // the odd last row has the terminal's background below; every line ends with a reset.
        #expect(lines(colored.output) == [
            "\(e)[38;2;255;0;0m\(e)[48;2;0;0;255m▀▀▀\(e)[38;2;0;0;255m\(e)[49m▄\(e)[0m",
            "\(e)[38;2;255;255;255m▀▀\(e)[38;2;0;0;0m▀▀\(e)[0m",
        ])

        let plain = try await terminal(common + ["--no-color"], quietStderr: true)
        #expect(plain.status == 0)
        #expect(!plain.output.contains(e))
        #expect(lines(plain.output) == ["....", "@@  "])

        for environment in [["NO_COLOR": "1"], ["TERM": "dumb"]] {
            let run = try await terminal(common, quietStderr: true, environment: environment)
            #expect(lines(run.output) == ["....", "@@  "], "\(environment)")
        }

        // A pipe is not a terminal: the same ASCII picture, no escapes.
        let pipe = try await piped(common)
        #expect(pipe.status == 0)
        #expect(pipe.stdout == "....\n@@  \n")
    }

    @Test func slowDownloadShowsTheSpinnerThenTheImageAndTheSecondShowComesFromTheCache() async throws {
        let origin = try await OriginFixture.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = origin.url("/slow/noise.png?chunk=16384&delay=60")
        let common = ["show", "--cache-dir", folder.path, "--width", "40", url]

        // Wide enough that "loading URL  NN% NNN KB" is never cut, whenever the spinner ticks.
        let first = try await terminal(common, columns: 200)
        #expect(first.status == 0)
        let spinner = try #require(first.output.range(of: "loading \(url)"))
        let image = try #require(first.output.range(of: "\(Self.escape)[38;2;"))
        #expect(spinner.lowerBound < image.lowerBound)
        let status = String(first.output[spinner.upperBound..<image.lowerBound])
        #expect(status.contains("%") && status.contains("KB"))
        #expect(first.output.contains { "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏".contains($0) })
        // Erased before the image: 256×256 noise at 40 columns is 40×40 pixels, 20 rows.
        #expect(first.output.contains("\r\(Self.escape)[K"))
        #expect(occurrences(of: "\(Self.escape)[0m\r\n", in: first.output) == 20)
        #expect(origin.requestCount(path: "/slow/noise.png") == 1)

        let second = try await terminal(common)
        #expect(second.status == 0)
        #expect(occurrences(of: "\(Self.escape)[0m\r\n", in: second.output) == 20)
        #expect(origin.requestCount(path: "/slow/noise.png") == 1)
        let json = try await piped(common + ["--json"])
        #expect(json.stdout.contains("\"cacheType\":\"disk\""))
        await origin.stop()
    }

    @Test func animationRedrawsInPlaceForEveryFrameOfEveryLoop() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("frames.gif")
        try Self.threeFrameGIF.write(to: file)
        let common = ["show", "--cache-dir", folder.path, "--width", "4", file.path]
        let e = Self.escape

        let played = try await terminal(common + ["--loop", "2"], quietStderr: true)
        #expect(played.status == 0)
        // 4×4 pixels are 2 rows; 3 frames × 2 loops, the cursor goes up before all but the first.
        #expect(occurrences(of: "\(e)[2A", in: played.output) == 5)
        #expect(occurrences(of: "\(e)[A", in: played.output) == 0)
        for color in ["255;0;0", "0;255;0", "0;0;255"] {
            #expect(occurrences(of: "\(e)[38;2;\(color)m", in: played.output) == 2 * 2)
        }

        let still = try await terminal(common + ["--loop", "0"], quietStderr: true)
        #expect(!still.output.contains("\(e)[2A"))
        #expect(still.output.contains("\(e)[38;2;255;0;0m") && !still.output.contains("\(e)[38;2;0;255;0m"))
        #expect(lines(still.output).count == 2)

        // Piped: the first frame once, as ASCII.
        let pipe = try await piped(common + ["--loop", "3"])
        #expect(pipe.status == 0)
        #expect(pipe.stdout.split(separator: "\n").count == 2)
        #expect(!pipe.stdout.contains(e))
    }

    @Test func failuresPrintOneLineNamingTheSourceAndUsageErrorsExitTwo() async throws {
        let origin = try await OriginFixture.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = origin.url("/img/missing.png")
        let notFound = try await piped(["show", "--cache-dir", folder.path, missing])
        #expect(notFound.status == 1)
        #expect(notFound.stdout.isEmpty)
        #expect(notFound.stderr.split(separator: "\n").count == 1)
        // The error names the URL: the line does not repeat it.
        #expect(notFound.stderr == "show: bad response: HTTP 404 from \(missing)\n")
        await origin.stop()

        let truncated = folder.appendingPathComponent("cut.jpg")
        let jpeg = try ImageCoderRegistry.shared.encode(Image(pixels: try TestImages.gradient(width: 64, height: 48)), as: .jpeg)
        try jpeg.prefix(jpeg.count / 2).write(to: truncated)
        let cut = try await piped(["show", "--cache-dir", folder.path, truncated.path])
        #expect(cut.status == 1)
        #expect(cut.stdout.isEmpty)
        #expect(cut.stderr.split(separator: "\n").count == 1)
        #expect(cut.stderr.hasPrefix("show: \(truncated.path): ") && cut.stderr.contains("truncated JPEG"))

        let absent = try await piped(["show", "--cache-dir", folder.path, folder.appendingPathComponent("none.png").path])
        #expect(absent.status == 1)
        #expect(absent.stderr.contains("none.png"))

        for usage in [["--width", "0"], ["--width", "-3"], ["--loop", "-1"], ["--processor", "sparkle:3"]] {
            let run = try await piped(["show", "--cache-dir", folder.path] + usage + [truncated.path])
            #expect(run.status == 2, "\(usage)")
            #expect(run.stdout.isEmpty)
        }
    }

    @Test func jsonDescribesTheFittedImageWithoutDrawing() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("gradient.png")
        try ImageCoderRegistry.shared.encode(Image(pixels: try TestImages.gradient(width: 64, height: 48)), as: .png).write(to: file)

        func describe(_ extra: [String]) async throws -> [String: Any] {
            let run = try await piped(["show", "--json", "--cache-dir", folder.path] + extra + [file.path])
            #expect(run.status == 0)
            #expect(run.stdout.split(separator: "\n").count == 1)
            return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        }

        let fitted = try await describe(["--width", "16"])
        #expect(Set(fitted.keys) == ["source", "width", "height", "frames", "columns", "rows", "cacheType"])
        #expect(fitted["source"] as? String == file.path)
        #expect(fitted["width"] as? Int == 16 && fitted["height"] as? Int == 12)
        #expect(fitted["columns"] as? Int == 16 && fitted["rows"] as? Int == 6)
        #expect(fitted["frames"] as? Int == 1)
        #expect(fitted["cacheType"] as? String == "none")

        // Never enlarged: 100 columns asked, 64 pixels there.
        let capped = try await describe(["--width", "100"])
        #expect(capped["columns"] as? Int == 64 && capped["rows"] as? Int == 24)

        // The processor runs first, then the fit: 32×24 after the crop-free resize, 8×6 drawn.
        let processed = try await describe(["--width", "8", "--processor", "resize:32x24"])
        #expect(processed["columns"] as? Int == 8 && processed["rows"] as? Int == 3)

        let animated = folder.appendingPathComponent("frames.gif")
        try Self.threeFrameGIF.write(to: animated)
        let run = try await piped(["show", "--json", "--cache-dir", folder.path, "--width", "4", animated.path])
        let gif = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(gif["frames"] as? Int == 3 && gif["rows"] as? Int == 2)
    }
}
