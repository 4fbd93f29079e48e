extension ImageProcessorSpec {
    /// Grammar entries of the geometry processors (downsample, resize, crop, round, border, flip, rotate).
    static let geometryEntries: [Entry] = [
        Entry(names: ["downsample"], usage: "downsample:WxH  fit inside WxH, decoding at reduced size when possible") { args in
            DownsamplingImageProcessor(size: try args.size(try args.required(0, "size"), "size"))
        },
    ]
}
