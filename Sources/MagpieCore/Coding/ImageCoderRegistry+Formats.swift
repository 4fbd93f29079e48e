#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The registry as the one authority on formats: what bytes are, what a format is called and typed, what its header
/// says, and which format an `Accept` header asks for. Every answer comes from the coders (registered ones first, then
/// the built-in ones), so no list of formats is written anywhere else.
extension ImageCoderRegistry {
    /// The coders asked about formats: the registered ones, then the built-in ones for formats no registered coder
    /// covers (so bytes are recognised even when their decoder was unregistered).
    private var describingCoders: [any ImageCoder] {
        let registered = allCoders
        let covered = Set(registered.map(\.format))
        return registered + Self.builtInCoderList.filter { !covered.contains($0.format) }
    }

    /// The formats this registry can name: the built-in ones in ``builtInCoders``' order, then those registered
    /// coders add, oldest registration first. ``ImageFormat/unknown`` is not one.
    public var knownFormats: [ImageFormat] {
        var formats = Self.builtInCoderList.map(\.format)
        for coder in allCoders.reversed() where coder.format != .unknown && !formats.contains(coder.format) {
            formats.append(coder.format)
        }
        return formats
    }

    /// The format of `data`, from the first coder that recognises its leading bytes (``ImageCoder/recognizes(_:)``).
    ///
    /// - Parameter data: The file's bytes, or at least its start.
    /// - Returns: The format; ``ImageFormat/unknown`` for empty or unrecognised data.
    public func format(of data: Data) -> ImageFormat {
        guard !data.isEmpty else { return .unknown }
        let coders = describingCoders
        return data.withUnsafeBytes { bytes in coders.first { $0.recognizes(bytes) }?.format } ?? .unknown
    }

    /// What the coder for `format` declares: a registered coder's traits, else the built-in coder's, else
    /// ``FormatTraits/generic(_:)``.
    ///
    /// - Parameter format: The format to describe.
    public func traits(for format: ImageFormat) -> FormatTraits {
        // Decided under the cache's lock: a registration changes the coders first and clears the cache after, so an
        // answer worked out from the coders before it never outlives it.
        traitsCache.withLock { cache in
            if let known = cache[format] { return known }
            let traits: FormatTraits
            if format == .unknown {
                traits = .generic(.unknown)
            } else if let coder = allCoders.first(where: { $0.format == format }) {
                traits = coder.traits
            } else {
                traits = Self.builtInCoderByFormat[format]?.traits ?? .generic(format)
            }
            cache[format] = traits
            return traits
        }
    }

    /// The format whose coder lists `fileExtension` (``FormatTraits/fileExtensions``).
    ///
    /// - Parameter fileExtension: Without the dot, in any case.
    /// - Returns: The format; nil when no coder lists the extension.
    public func format(forFileExtension fileExtension: String) -> ImageFormat? {
        let lowercased = fileExtension.lowercased()
        return describingCoders.first { $0.traits.fileExtensions.contains(lowercased) }?.format
    }

    /// Reads the format, size and (when cheap to tell) frame count from the header of `data`, with the header reader of
    /// the coder that recognises it (``ImageCoder/header(of:)``), without decoding pixels or checking limits. The
    /// built-in readers cover JPEG, PNG/APNG, GIF, WebP, AVIF and HEIF (the displayed size, after `clap` and `irot`),
    /// TIFF (IFD0 and the page count), JPEG XL (basic info), BMP, ICO and SVG.
    ///
    /// - Parameter data: The file's bytes; for a frame count of GIF and animated WebP, the whole file.
    /// - Returns: What the header declares.
    /// - Throws: ``MagpieError/decodingFailed(reason:)`` with `emptyData`, `unknownFormat`, `unsupportedFormat` (a
    ///   variant the format's reader refuses, or a format whose coder reads no header), `truncatedData` when the
    ///   header is cut short, or `corruptData` when it is malformed.
    public func header(of data: Data) throws -> ImageHeader {
        guard !data.isEmpty else { throw MagpieError.decodingFailed(reason: .emptyData) }
        let coders = describingCoders
        guard let coder = data.withUnsafeBytes({ bytes in coders.first { $0.recognizes(bytes) } }) else {
            throw MagpieError.decodingFailed(reason: .unknownFormat(leadingBytesOf: data))
        }
        return try coder.header(of: data)
    }

    /// The encodable formats `Accept` can pick for some source, in the order negotiation weighs them: the
    /// ``FormatTraits/AcceptNegotiation/whenAccepted(rank:)`` ones by rank, best first, then the
    /// ``FormatTraits/AcceptNegotiation/whenAcceptedForSameFormat`` ones; equal ranks keep ``knownFormats``' order.
    /// What a server's cache key for `format:auto` must read from `Accept`: AVIF, WebP, JPEG XL.
    public var negotiatedFormats: [ImageFormat] {
        var ranked: [(format: ImageFormat, rank: Int)] = []
        for format in encodableFormats {
            switch traits(for: format).negotiation {
            case .whenAccepted(let rank): ranked.append((format, rank))
            case .whenAcceptedForSameFormat: ranked.append((format, Int.min))
            case .never, .universal: break
            }
        }
        return ranked.enumerated().sorted { ($0.element.rank, -$0.offset) > ($1.element.rank, -$1.offset) }.map(\.element.format)
    }

    /// The formats `Accept` may pick for a source in `source`: ``negotiatedFormats`` less those negotiated
    /// ``FormatTraits/AcceptNegotiation/whenAcceptedForSameFormat`` for another format than `source`.
    ///
    /// - Parameter source: The source image's format.
    public func negotiableFormats(for source: ImageFormat) -> [ImageFormat] {
        negotiatedFormats.filter { $0 == source || traits(for: $0).negotiation != .whenAcceptedForSameFormat }
    }

    /// The format `accept` asks for among ``negotiableFormats(for:)``, in two tiers: the
    /// ``FormatTraits/AcceptNegotiation/whenAccepted(rank:)`` formats first (the highest explicit weight above 0, the
    /// better rank on equal weights), then the source's own format when it is negotiated
    /// ``FormatTraits/AcceptNegotiation/whenAcceptedForSameFormat`` and named with a weight above 0; nil when `accept`
    /// names none of them (wildcards never count).
    ///
    /// - Parameters:
    ///   - accept: The request's `Accept` header.
    ///   - source: The source image's format.
    public func acceptedFormat(_ accept: AcceptHeader, source: ImageFormat) -> ImageFormat? {
        var best: (format: ImageFormat, weight: Double)?
        for format in negotiableFormats(for: source) {
            let weight = accept.explicitQuality(of: traits(for: format).mimeType) ?? 0
            if format == source, case .whenAcceptedForSameFormat = traits(for: format).negotiation {
                // The second tier: only when no format of the first is accepted.
                if best == nil, weight > 0 { return format }
                continue
            }
            if weight > 0, weight > (best?.weight ?? 0) { best = (format, weight) }
        }
        return best?.format
    }
}
