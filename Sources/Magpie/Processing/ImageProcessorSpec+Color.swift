extension ImageProcessorSpec {
    /// Grammar entries of the colour and filter processors (blur, tint, color, gray, overlay, blend).
    static let colorEntries: [Entry] = []
}
