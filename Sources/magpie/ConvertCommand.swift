import ArgumentParser
import Foundation
import Magpie

/// `magpie convert IN OUT`: decode (downsampled when allowed, in sRGB on request), resize to fit, encode with the
/// chosen colour profile and metadata.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert", abstract: "Convert an image to another format, optionally shrinking or processing it.",
        discussion: "Processor specs (--processor):\n" + ImageProcessorSpec.grammar)

    @Argument(help: "Input image.")
    var input: String

    @Argument(help: "Output file; its extension picks the format unless --format is given.")
    var output: String

    @Option(help: "Output format: \(Self.encodable.joined(separator: ", ")).")
    var format: String?

    @Option(help: "Lossy quality 1-100 (every lossy format: JPEG, WebP, AVIF, JPEG XL).")
    var quality: Int = 85

    @Option(help: "Encoder speed 0 (slowest, smallest) to 10 (fastest) for AVIF; effort for JPEG XL.")
    var speed: Int?

    @Flag(help: "Lossless WebP, AVIF or JPEG XL.")
    var lossless = false

    @Option(help: ArgumentHelp(
        "keep: leave the colours as stored and embed their profile; srgb: convert to sRGB (no profile written).",
        valueName: "keep|srgb"))
    var color: ColorChoice = .keep

    @Option(help: ArgumentHelp(
        "none: write only the colour profile; keep: also EXIF (orientation reset) and XMP; strip: nothing, after "
            + "converting to sRGB.", valueName: "none|keep|strip"))
    var metadata: ImageEncodingOptions.MetadataPolicy = .none

    @Flag(help: "Progressive JPEG.")
    var progressive = false

    @Option(name: .customLong("max-size"), help: "Shrink to fit inside WxH (for example 256x256), keeping the aspect ratio.")
    var maxSize: String?

    @Option(help: "Process the image with this chain (see below), e.g. resize:256x256:fill|crop:256x256|blur:2; after --max-size.")
    var processor: String?

    @Option(name: .customLong("max-pixels"), help: ArgumentHelp(
        "Decode limit: most pixels (width × height) of a frame; a larger input is refused before it is decoded.",
        valueName: "n"))
    var maxPixels = ImageDecodingLimits.default.maxPixelsPerFrame

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be between 1 and 100") }
        guard maxPixels > 0 else { throw ValidationError("--max-pixels must be more than 0") }
        if let speed, !(0...10).contains(speed) { throw ValidationError("--speed must be between 0 and 10") }
        if let maxSize, PixelSize(parsing: maxSize) == nil {
            throw ValidationError("--max-size must look like 256x256")
        }
        _ = try processorOption(processor)
        guard outputFormat != nil else {
            throw ValidationError("cannot tell the output format: use --format \(Self.encodable.joined(separator: "|")) or a known extension")
        }
    }

    var outputFormat: ImageFormat? {
        let chosen = format.flatMap { ImageFormat(rawValue: $0.lowercased() == "jpg" ? "jpeg" : $0.lowercased()) }
            ?? ImageFormat(fileExtension: URL(fileURLWithPath: output).pathExtension)
        guard let chosen, ImageCoderRegistry.shared.canEncode(chosen) else { return nil }
        return chosen
    }

    /// The formats the registry writes, by name: the one list of what `convert` can produce.
    static var encodable: [String] { ImageCoderRegistry.shared.encodableFormats.map(\.rawValue) }

    func run() throws {
        let box = maxSize.flatMap(PixelSize.init(parsing:))
        let start = ContinuousClock.now
        do {
            let data = try readFile(input)
            // Downsampling first lets the decoder skip resolution (JPEG DCT scaling) before any processing.
            var chain: any ImageProcessor = DefaultImageProcessor.default
            if let box { chain = DownsamplingImageProcessor(size: box) }
            if let processor = try processorOption(processor) { chain = chain.append(another: processor) }
            let limits = ImageDecodingLimits(maxPixelsPerFrame: maxPixels)
            var decoding = ImageDecodingOptions(limits: limits)
            decoding.colorSpace = color == .srgb ? .sRGB : .asStored
            let context = ImageProcessingContext(decodingOptions: decoding)
            guard let image = try chain.process(item: .data(data), context: context) else {
                throw MagpieError.processingFailed(reason: .processorFailed(identifier: chain.identifier))
            }
            var options = ImageEncodingOptions(quality: quality, progressive: progressive, lossless: lossless)
            options.metadata = metadata
            options.speed = speed
            let encoded = try ImageCoderRegistry.shared.encode(image, as: outputFormat!, options: options)
            do {
                try encoded.write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw CLIError("cannot write \(output): \(fileErrorReason(error, path: output))")
            }
            let ms = Units.ms(ContinuousClock.now - start)
            if json {
                print(jsonLine([
                    "input": input, "output": output, "format": outputFormat!.rawValue, "width": image.width,
                    "height": image.height, "frames": image.frames.count, "bytes": encoded.count, "ms": Int(ms.rounded()),
                ]))
            } else {
                print("\(input) -> \(output): \(outputFormat!) \(image.width)x\(image.height), \(image.frames.count) frame(s), \(encoded.count) bytes")
            }
        } catch {
            if json { print(jsonLine(["input": input, "error": "\(error)"])) } else { printError("\(input): \(error)") }
            throw ExitCode(1)
        }
    }
}

/// `--color`: keep the stored colours and their profile, or convert to sRGB.
enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case keep, srgb
}

extension ImageEncodingOptions.MetadataPolicy: ExpressibleByArgument {}
