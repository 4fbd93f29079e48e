import Foundation
import MagpieCore
import Testing

/// deploy/nginx/magpie.conf reduces `Accept` to a token per format Magpie's `format:auto` can pick (for any source,
/// or for a source in that same format), and tells the instance a canonical `Accept` for each. Both must follow the
/// coders' traits (``FormatTraits/negotiation``): these tests fail when a coder's negotiation changes, or a format
/// becomes negotiable, and the map does not.
struct NginxAcceptMapTests {
    static let configuration: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("deploy/nginx/magpie.conf"), encoding: .utf8)) ?? ""
    }()

    /// The entries of `map SOURCE VARIABLE { ... }`, in order: (pattern or value, result).
    static func map(_ variable: String) -> [(key: String, value: String)] {
        guard let start = configuration.range(of: " \(variable) {\n") else { return [] }
        // Up to the line that closes the block (patterns hold braces of their own: `{0,3}`).
        let lines = configuration[start.upperBound...].split(separator: "\n").prefix { $0.trimmingCharacters(in: .whitespaces) != "}" }
        return lines.compactMap { line in
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasSuffix(";"), !text.hasPrefix("#") else { return nil }
            let entry = text.dropLast()
            if entry.hasPrefix("\"") {
                guard let close = entry.dropFirst().firstIndex(of: "\"") else { return nil }
                return (String(entry[entry.index(after: entry.startIndex)..<close]),
                        entry[entry.index(after: close)...].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            }
            let parts = entry.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        }
    }

    /// Every format negotiation can pick, in the order it weighs them (AVIF, WebP, then JPEG XL, which only a JPEG XL
    /// source gets and only when neither of the others is accepted): what the map must have a token for, in that
    /// order, since nginx takes the first pattern that matches.
    static var tokenFormats: [ImageFormat] { ImageCoderRegistry.shared.negotiatedFormats }

    /// Sources of the formats the instance may answer in: the universal ones and every negotiated one.
    static var sources: [ImageFormat] { [.jpeg, .png, .gif] + tokenFormats }

    @Test func theMapHasOneTokenPerNegotiatedFormatInTheOrderNegotiationWeighsThem() throws {
        try #require(!Self.configuration.isEmpty, "deploy/nginx/magpie.conf is missing")
        let entries = Self.map("$magpie_accept").filter { $0.key != "default" }
        #expect(Self.tokenFormats.contains(.jxl), "JPEG XL is negotiated (for a JPEG XL source)")
        // Equal lists: a negotiable format without a token, a token no format has, or the wrong order all fail.
        #expect(entries.map(\.value) == Self.tokenFormats.map(\.rawValue))
        for (entry, format) in zip(entries, Self.tokenFormats) {
            // The pattern names the format's MIME type and refuses it at q=0, as the instance does.
            #expect(entry.key.hasPrefix("~*" + NSRegularExpression.escapedPattern(for: format.mimeType).replacingOccurrences(of: "\\/", with: "/")))
            #expect(entry.key.contains("q\\s*=\\s*0"))
        }
        #expect(Self.map("$magpie_accept").contains { $0.key == "default" && $0.value == "other" })
    }

    @Test func eachTokensCanonicalAcceptMakesTheInstancePickThatTokensFormat() throws {
        try #require(!Self.configuration.isEmpty, "deploy/nginx/magpie.conf is missing")
        let canonical = Dictionary(Self.map("$magpie_accept_canonical").map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        for format in Self.tokenFormats {
            let header = try #require(canonical[format.rawValue], "no canonical Accept for \(format.rawValue)")
            // Wherever the instance may pick the format (for JPEG XL: a JPEG XL source only), the header makes it.
            let sources = Self.sources.filter { ImageCoderRegistry.shared.negotiableFormats(for: $0).contains(format) }
            #expect(!sources.isEmpty)
            for source in sources {
                #expect(ImageCoderRegistry.shared.acceptedFormat(AcceptHeader(header), source: source) == format, "\(header), \(source)")
            }
        }
        let other = try #require(canonical["default"])
        for source in Self.sources {
            #expect(ImageCoderRegistry.shared.acceptedFormat(AcceptHeader(other), source: source) == nil)
        }
    }

    @Test func theMapsPatternsTellTheTokensApartAsTheInstanceReadsAccept() throws {
        try #require(!Self.configuration.isEmpty, "deploy/nginx/magpie.conf is missing")
        let entries = Self.map("$magpie_accept").filter { $0.key != "default" }
        func token(_ accept: String) throws -> String {
            for entry in entries {
                let regex = try NSRegularExpression(pattern: String(entry.key.dropFirst(2)), options: .caseInsensitive)
                if regex.firstMatch(in: accept, range: NSRange(accept.startIndex..., in: accept)) != nil { return entry.value }
            }
            return "other"
        }
        let canonical = Dictionary(Self.map("$magpie_accept_canonical").map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        // Headers whose formats carry equal weights: there the token's canonical header makes the instance pick, for
        // every source, what the client's own header would have.
        for accept in [
            "image/avif,image/webp,image/apng,image/*,*/*;q=0.8", "image/webp,*/*", "*/*", "image/*", "image/AVIF",
            "image/avif;q=0, image/webp", "image/avif;q=0.0,image/webp;q=0", "image/png,image/jpeg", "",
            "image/jxl", "image/JXL,*/*", "image/jxl;q=0,*/*", "image/jxl,image/avif;q=0", "image/jxl,image/webp",
            "image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",
        ] {
            let token = try token(accept)
            let told = try #require(canonical[token] ?? canonical["default"])
            for source in Self.sources {
                let picked = ImageCoderRegistry.shared.acceptedFormat(AcceptHeader(accept), source: source)
                #expect(ImageCoderRegistry.shared.acceptedFormat(AcceptHeader(told), source: source) == picked, "\(accept), \(source)")
            }
            // The token names the format the instance picks when the client's formats allow it.
            let best = Self.sources.compactMap { ImageCoderRegistry.shared.acceptedFormat(AcceptHeader(accept), source: $0) }
            #expect(token == (Self.tokenFormats.first { best.contains($0) }?.rawValue ?? "other"), "\(accept)")
        }
    }
}
