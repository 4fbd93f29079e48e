extension ImageProcessorSpec {
    /// Grammar entries of the colour and filter processors (blur, tint, color, gray, overlay, blend).
    static let colorEntries: [Entry] = [
        Entry(names: ["blur"], usage: "blur:R  Gaussian blur with standard deviation R pixels") { args in
            let radius = try args.number(try args.required(0, "radius"), "radius")
            guard radius >= 0 else { throw args.error("radius \(radius) is negative") }
            return BlurImageProcessor(blurRadius: radius)
        },
        Entry(names: ["tint"], usage: "tint:RRGGBBAA  paint the colour over the image at its alpha") { args in
            TintImageProcessor(tint: try args.color(try args.required(0, "colour"), "colour"))
        },
        Entry(
            names: ["color"],
            usage: "color:B[:C[:S[:EV]]]  brightness (-1...1, 0), contrast (1), saturation (1), exposure in stops (0)"
        ) { args in
            let processor = ColorControlsProcessor(
                brightness: try args.number(try args.required(0, "brightness"), "brightness"),
                contrast: try args.positional(1).map { try args.number($0, "contrast") } ?? 1,
                saturation: try args.positional(2).map { try args.number($0, "saturation") } ?? 1,
                inputEV: try args.positional(3).map { try args.number($0, "exposure") } ?? 0)
            if let problem = processor.problem { throw args.error(problem) }
            return processor
        },
        Entry(names: ["gray", "bw"], usage: "gray  greyscale by Rec. 709 luma (alias bw)") { _ in
            BlackWhiteProcessor()
        },
        Entry(
            names: ["overlay"],
            usage: "overlay:RRGGBBAA[:FRACTION]  mix the colour in, keeping FRACTION (0...1, 0.5) of the image"
        ) { args in
            OverlayImageProcessor(
                overlay: try args.color(try args.required(0, "colour"), "colour"),
                fraction: try args.positional(1).map { try args.number($0, "fraction", in: 0...1) } ?? 0.5)
        },
        Entry(
            names: ["blend"],
            usage: "blend:MODE[:ALPHA][:bg=RRGGBBAA]  composite at opacity ALPHA (0...1, 1) over bg with MODE ("
                + BlendMode.allCases.map(\.specName).joined(separator: ", ") + ")"
        ) { args in
            let name = try args.required(0, "blend mode")
            guard let mode = BlendMode(specName: name) else { throw args.error("unknown blend mode \"\(name)\"") }
            return BlendImageProcessor(
                blendMode: mode,
                alpha: try args.positional(1).map { try args.number($0, "alpha", in: 0...1) } ?? 1,
                backgroundColor: try args.named("bg").map { try args.color($0, "background") })
        },
    ]
}
