import ArgumentParser
import Foundation
import Magpie

/// `magpie show URL`: loads an image through the view-binding layer into a terminal view and draws
/// it with 24-bit colour half blocks (or ASCII without colour), playing animations in place.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Draw an image in the terminal with 24-bit colour half blocks.",
        discussion: """
            Each character cell shows two pixels stacked (▀ with the top pixel as foreground, the bottom \
            one as background), so one pixel is roughly square. The image is shrunk to --width columns \
            (never enlarged) by the pipeline, so the shrunk image is cached as a processed variant.

            Colour needs a terminal on stdout and neither --no-color, NO_COLOR nor TERM=dumb; otherwise \
            the image is drawn with the ASCII ramp " .:-=+*#%@" by brightness (transparent: space) and no \
            escape sequences at all. Animations play --loop cycles in place only in colour on a terminal; \
            otherwise (a pipe, a file, --no-color) the first frame is printed once. --loop 0 prints the \
            first frame only. While loading, a spinner with the download progress is shown on stderr \
            when it is a terminal.

            --json prints {"source", "width", "height", "frames", "columns", "rows", "cacheType"} instead \
            of drawing: width and height are the drawn image's pixels (after --processor and the fit to \
            the columns), rows = ceil(height / 2).

            Processor specs (--processor):

            """ + ImageProcessorSpec.grammar)

    /// Pixel rows per box of the fit: any height is accepted, only the width is limited.
    private static let unlimitedHeight = 1 << 20

    @Argument(help: "An http(s), file: or data: URL, or a path to a file.")
    var url: String

    @OptionGroup var global: GlobalOptions

    @OptionGroup var cacheFolder: CacheFolderOptions

    @Option(help: "The cache's name (its folder below --cache-dir).")
    var name = "default"

    @Option(parsing: .unconditional, help: "Columns to draw (default: the terminal's width, at most the image's width).")
    var width: Int?

    @Option(help: "Process the image with this chain (see below) before it is fitted to the columns.")
    var processor: String?

    @Option(parsing: .unconditional, help: "Animation cycles to play (0: the first frame only).")
    var loop = 1

    @OptionGroup var timing: TimeoutOption

    @Flag(help: "Print one JSON object describing the image instead of drawing it.")
    var json = false

    func validate() throws {
        if let width, !(1...10_000).contains(width) { throw ValidationError("--width must be between 1 and 10000 columns") }
        guard loop >= 0 else { throw ValidationError("--loop must be 0 or more") }
        _ = try processorOption(processor)
    }

    func run() async throws {
        global.bootstrapLogging()
        let source: Source
        do {
            source = try FetchCommand.url(from: url).convertToSource()
        } catch {
            throw fail(with: "\(error)")
        }
        let cache = cacheFolder.openCache(named: name)
        if let error = cache.diskError { throw fail(with: "\(error)") }
        let downloader = global.makeDownloader(timeout: timing.timeout)

        let color = global.usesColor(on: .standardOutput)
        let view = TerminalImageView(settings: .init(
            mode: color ? .color : .ascii, loops: loop, animates: color && Terminal.isTTY(.standardOutput), draws: !json))
        view.mg.manager = ImageManager(downloader: downloader, cache: cache)
        if !json && Terminal.isTTY(.standardError) {
            view.mg.indicator = SpinnerIndicator(label: "loading \(url)", usesEscapes: global.usesColor(on: .standardError))
        }
        let options = try loadingOptions(for: source)
        let result = await withCheckedContinuation { continuation in
            view.mg.setImage(with: source, options: options) { continuation.resume(returning: $0) }
        }
        await view.finishDrawing()
        await view.mg.manager.shutdown()
        try? await downloader.shutdown()

        switch result {
        case .success(let value):
            if json {
                let image = value.image
                print(jsonLine([
                    "source": url, "width": image.width, "height": image.height, "frames": image.frames.count,
                    "columns": image.width, "rows": HalfBlockRenderer.rows(forHeight: image.height),
                    "cacheType": "\(value.cacheType)",
                ]))
            }
        case .failure(let error):
            throw fail(with: "\(error)")
        }
    }

    /// The pipeline options: the user's processor, then the fit to the columns, as one cached variant.
    private func loadingOptions(for source: Source) throws -> [MagpieOption] {
        let columns = width ?? Terminal.columns(of: .standardOutput)
        // Downsampling never enlarges, which caps the columns at the image's width; for JPEG and
        // WebP data it also decodes at reduced size instead of in full.
        let fit = DownsamplingImageProcessor(size: PixelSize(width: columns, height: Self.unlimitedHeight))
        let chain: any ImageProcessor = try processorOption(processor).map { $0 |> fit } ?? fit
        // The process exits right after drawing: disk writes must be finished before.
        var options: [MagpieOption] = [.waitForCache, .processor(chain)]
        if case .network = source {
            // Another width then needs no download.
            options.append(.cacheOriginalImage)
        } else {
            // A local file can change under the same path: a disk variant keyed by the path would go stale.
            options.append(.cacheMemoryOnly)
        }
        return options
    }

    /// Reports a failure as one line (or one JSON object) and returns the exit code to throw.
    private func fail(with message: String) -> ExitCode {
        if json {
            print(jsonLine(["source": url, "error": message]))
        } else {
            printError("show: " + failureLine(for: url, message: message))
        }
        return ExitCode(1)
    }
}
