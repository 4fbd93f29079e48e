import Magpie

extension ThumborOptions {
    /// The options and the image of a thumbor path: `signedPath` is what follows `/{unsafe|signature}/`, as received.
    /// Each part is optional and taken in thumbor's order; the first segment that is none of them starts the image,
    /// which is everything after it, percent-decoded once (`http://` is assumed when it names no scheme, as thumbor's
    /// HTTP loader does).
    ///
    /// - Throws: A 400 ``ServeRequestError`` for a missing image, a filter with malformed arguments, an image that is
    ///   not a valid `http`/`https` URL, or a part thumbor reads but Magpie does not (`debug/`).
    static func parse(_ signedPath: Substring) throws(ServeRequestError) -> (options: ThumborOptions, image: ServeSource) {
        var (options, rest) = try parts(signedPath)
        if options.has("extract_focal") {
            // thumbor's extract_focal(): the image's own thumbor URL names the source and a crop, which becomes the
            // focal region; the source is then loaded whole (thumbor rewrites its image URL the same way).
            let decoded = PercentDecoding.strict(rest).map { Substring($0) } ?? rest
            if let (image, box) = extractedFocal(decoded) {
                options.filters = options.filters.map { $0 == .extractFocal ? .focal(box) : $0 }
                return (options, try Self.image(image, decoded: true))
            }
            options.filters.removeAll { $0 == .extractFocal }
        }
        return (options, try image(rest))
    }

    /// thumbor's `extract_focal` search: up to 10 levels of `[scheme://]host/(unsafe|SIGNATURE)/…/IMAGE`, until one
    /// has a manual crop; that level's image and crop.
    private static func extractedFocal(_ url: Substring) -> (image: Substring, crop: Box)? {
        var url = url
        for _ in 0..<10 {
            // `^(https?://)?.*?/`: the scheme and host go.
            if url.hasPrefix("http://") { url = url.dropFirst(7) } else if url.hasPrefix("https://") { url = url.dropFirst(8) }
            guard let slash = url.firstIndex(of: "/") else { return nil }
            url = url[url.index(after: slash)...]
            guard let end = url.firstIndex(of: "/") else { return nil }
            let signature = url[..<end]
            guard signature == "unsafe" || signature.count >= 28, let (inner, image) = try? parts(url[url.index(after: end)...]),
                !image.isEmpty
            else { return nil }
            if let crop = inner.crop { return (image, crop) }
            url = image
        }
        return nil
    }

    /// The options of `signedPath` and what follows them (the image, as received).
    private static func parts(_ signedPath: Substring) throws(ServeRequestError) -> (ThumborOptions, Substring) {
        var options = ThumborOptions()
        var rest = signedPath
        /// The next segment when something follows it (a part always has the image after it).
        func next() -> Substring? {
            guard let slash = rest.firstIndex(of: "/"), rest.index(after: slash) < rest.endIndex else { return nil }
            return rest[..<slash]
        }
        func consume(_ segment: Substring) { rest = rest[rest.index(segment.endIndex, offsetBy: 1)...] }

        if let segment = next(), segment == "debug" {
            throw .badRequest("thumbor's \"debug/\" (focal points drawn on the image) is not supported")
        }
        if let segment = next(), segment == "meta" {
            options.meta = true
            consume(segment)
        }
        if let segment = next(), let trim = trimPart(segment) {
            (options.trimReference, options.trimTolerance) = trim
            consume(segment)
        }
        if let segment = next(), let box = cropPart(segment) {
            options.crop = box
            consume(segment)
        }
        if let segment = next(), let mode = FitMode(rawValue: String(segment)), mode != .crop {
            options.fitMode = mode
            consume(segment)
        }
        if let segment = next(), let size = sizePart(segment) {
            (options.flipHorizontal, options.width, options.flipVertical, options.height) = size
            consume(segment)
        }
        if let segment = next(), let x = ["left": 0.0, "center": 0.5, "right": 1.0][String(segment)] {
            options.horizontalAlignment = x
            consume(segment)
        }
        if let segment = next(), let y = ["top": 0.0, "middle": 0.5, "bottom": 1.0][String(segment)] {
            options.verticalAlignment = y
            consume(segment)
        }
        if let segment = next(), segment == "smart" {
            options.smart = true
            consume(segment)
        }
        if rest.hasPrefix("filters:") {
            // thumbor's pattern `filters:(.+?\))/`: the filters end at the first ")/" (an argument may hold "/").
            if let end = rest.firstRange(of: ")/"), rest[end.upperBound...].isEmpty == false {
                options.filters = try ThumborFilter.parseList(rest[rest.index(rest.startIndex, offsetBy: 8)..<rest.index(after: end.lowerBound)])
                rest = rest[end.upperBound...]
            }
        }
        return (options, rest)
    }

    /// `trim`, `trim:top-left`, `trim:bottom-right:10`, `trim:25`.
    private static func trimPart(_ segment: Substring) -> (TrimReference, Int)? {
        let pieces = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard pieces[0] == "trim", pieces.count <= 3 else { return nil }
        var reference = TrimReference.topLeft
        var tolerance = 0
        var index = 1
        if index < pieces.count, let named = TrimReference(rawValue: String(pieces[index])) {
            reference = named
            index += 1
        }
        if index < pieces.count {
            guard let value = wholeNumber(pieces[index]) else { return nil }
            tolerance = value
            index += 1
        }
        return index == pieces.count ? (reference, tolerance) : nil
    }

    /// `AxB:CxD`.
    private static func cropPart(_ segment: Substring) -> Box? {
        let corners = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        let numbers = corners.flatMap { $0.split(separator: "x", omittingEmptySubsequences: false) }.compactMap(wholeNumber)
        guard numbers.count == 4, corners.allSatisfy({ $0.split(separator: "x", omittingEmptySubsequences: false).count == 2 }) else {
            return nil
        }
        return Box(left: numbers[0], top: numbers[1], right: numbers[2], bottom: numbers[3])
    }

    /// `[-]Wx[-]H`, each side digits, `orig` or empty.
    private static func sizePart(_ segment: Substring) -> (Bool, Side, Bool, Side)? {
        guard let x = segment.firstIndex(of: "x") else { return nil }
        func side(_ text: Substring) -> (Bool, Side)? {
            let flip = text.hasPrefix("-")
            let value = flip ? text.dropFirst() : text
            if value.isEmpty { return (flip, .pixels(0)) }
            if value == "orig" { return (flip, .original) }
            return wholeNumber(value).map { (flip, .pixels($0)) }
        }
        guard let width = side(segment[..<x]), let height = side(segment[segment.index(after: x)...]) else { return nil }
        return (width.0, width.1, height.0, height.1)
    }

    /// Digits only, at most 9 of them (a larger size is refused later by the server's limits, not parsed as one).
    private static func wholeNumber(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// The image URL: percent-decoded once, `http://` assumed when it has no scheme.
    static func image(_ text: Substring, decoded alreadyDecoded: Bool = false) throws(ServeRequestError) -> ServeSource {
        guard !text.isEmpty else { throw .badRequest("the thumbor URL has no image after its options") }
        guard var decoded = alreadyDecoded ? String(text) : PercentDecoding.strict(text) else {
            throw .badRequest("image URL \(ServeRequestError.quoted(text)) has a \"%\" that starts no valid escape, or is not UTF-8")
        }
        // A proxy that merges slashes (nginx's default) turns an unencoded `https://` into `https:/`: put it back.
        for prefix in ["http:/", "https:/"] where decoded.lowercased().hasPrefix(prefix) && !decoded.dropFirst(prefix.count).hasPrefix("/") {
            decoded = String(decoded.prefix(prefix.count)) + "/" + decoded.dropFirst(prefix.count)
        }
        // A URL with another scheme is refused for it, not fetched as `http://ftp://…` (which thumbor would try).
        let scheme = decoded.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
        let hasScheme = !scheme.isEmpty && decoded.dropFirst(scheme.count).hasPrefix("://")
        return try ServeSource.parse(hasScheme ? decoded : "http://" + decoded)
    }
}
