/// The media ranges of an `Accept` header with their `q` weights, as far as choosing an image format needs them
/// (``ImageCoderRegistry/acceptedFormat(_:source:)``).
public struct AcceptHeader: Sendable {
    private let entries: [Entry]

    private struct Entry: Sendable {
        let range: String
        let quality: Double
    }

    /// Parses `text` leniently: ranges are compared in lowercase, a missing `q` is 1, and a `q` that is not a
    /// number in 0...1 counts as 0, so a malformed entry never opts a client into a format.
    ///
    /// - Parameter text: The header's value; nil or empty for a request without one.
    public init(_ text: String?) {
        entries = (text ?? "").split(separator: ",").compactMap { item in
            let parts = item.split(separator: ";")
            guard let range = parts.first?.trimmingASCIIWhitespace.lowercased(), !range.isEmpty else { return nil }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingASCIIWhitespace.lowercased() == "q" else { continue }
                let value = Double(pair[1].trimmingASCIIWhitespace) ?? -1
                quality = (0...1).contains(value) ? value : 0
            }
            return Entry(range: range, quality: quality)
        }
    }

    /// The weight the client gives `mimeType` by naming it explicitly, the lowest when named more than once; nil
    /// when only wildcards (`image/*`, `*/*`) or nothing cover it.
    ///
    /// Wildcards are not enough for AVIF, WebP or JPEG XL: browsers that decode them list them explicitly, while
    /// `*/*` is also sent by clients that decode none of them.
    ///
    /// - Parameter mimeType: A lowercase MIME type, `image/avif`.
    public func explicitQuality(of mimeType: String) -> Double? {
        entries.filter { $0.range == mimeType }.map(\.quality).min()
    }
}
