import ArgumentParser
import Magpie

/// `--processor` and `--downsample` for the commands that retrieve into a cache (`fetch`, `prefetch`): what each
/// image becomes, and the processor variant it is cached under.
struct ProcessingChainOptions: ParsableArguments {
    @Option(help: "Process each image with this chain (see below), e.g. resize:256x256:fit|round:12; cached under the chain.")
    var processor: String?

    @Option(help: "Shrink each image to fit inside WxH while decoding (before --processor).")
    var downsample: String?

    func validate() throws {
        if let downsample, PixelSize(parsing: downsample) == nil { throw ValidationError("--downsample must look like 256x256") }
        _ = try processorOption(processor)
    }

    /// True when either flag is given: the images are not the sources' own.
    var isProcessing: Bool { processor != nil || downsample != nil }

    /// The retrieval options of the two flags.
    func magpieOptions() throws -> [MagpieOption] {
        var options: [MagpieOption] = []
        if let processor = try processorOption(processor) { options.append(.processor(processor)) }
        if let size = downsample.flatMap(PixelSize.init(parsing:)) { options.append(.downsampling(size)) }
        return options
    }
}
