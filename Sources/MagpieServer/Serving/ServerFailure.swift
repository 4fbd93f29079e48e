import Magpie

/// A request the server answers with an error status, and the text it sends. The text names what was wrong with
/// the request (a bad option, a limit) but never internal addresses, file paths or secrets; those go to ``reason``,
/// which only the access log shows.
struct ServerFailure: Error, Sendable, Equatable {
    let status: Int
    let message: String
    /// The origin failure's kind, for the metrics (`timeout`, `status_404`, `refused`, …); nil when not an origin's.
    var originErrorKind: String?
    /// What the operator needs to know and the client must not see (`10.0.0.1 is private`, the pipeline error); the
    /// access log's `reason`. Nil when the message says it all.
    var reason: String?

    init(status: Int, message: String, originErrorKind: String? = nil, reason: String? = nil) {
        self.status = status
        self.message = message
        self.originErrorKind = originErrorKind
        self.reason = reason
    }

    init(_ error: ServeRequestError) {
        // The body says what was wrong; the access line says it too, so a refused URL is explained where it is counted.
        self.init(status: error.status, message: error.message, reason: error.message)
    }

    /// The status and text for a pipeline error: origin 404 → 404, other origin failures → 502, origin timeout → 504,
    /// too many bytes → 413, too many pixels, undecodable or unencodable → 422, an unsupported source format → 415.
    /// The error itself becomes the ``reason``.
    init(_ error: MagpieError) {
        self.init(mapping: error)
        reason = "\(error)"
    }

    private init(mapping error: MagpieError) {
        switch error {
        case .requestFailed(let reason): self = Self.request(reason)
        case .responseFailed(let reason): self = Self.response(reason)
        case .decodingFailed(let reason): self = Self.decoding(reason)
        case .processingFailed(let reason): self = Self.processing(reason)
        case .encodingFailed(.unsupportedFormat(let format)):
            self.init(status: 415, message: "cannot write \(format.rawValue)")
        case .encodingFailed(.invalidOption(let message)): self.init(status: 400, message: message)
        case .encodingFailed(.sizeNotEncodable(let format, let size, let limit)):
            // The format's own limit, named: `result 1x100000 exceeds JPEG's 65500 rows`.
            self.init(status: 422, message: "result \(MagpieError.EncodingFailureReason.sizeNotEncodable(format, size: size, limit: limit))")
        case .encodingFailed, .imageCreationFailed, .cacheFailed, .imageSettingFailed:
            self.init(status: 500, message: "internal error")
        }
    }

    private static func request(_ reason: MagpieError.RequestFailureReason) -> ServerFailure {
        switch reason {
        case .networkAccessRefused, .redirectRefused:
            ServerFailure(status: 403, message: "source not allowed", originErrorKind: "refused")
        case .timedOut: ServerFailure(status: 504, message: "source timed out", originErrorKind: "timeout")
        case .connectionFailed, .tlsFailed:
            ServerFailure(status: 502, message: "source unreachable", originErrorKind: "connection")
        case .tooManyRedirects, .redirectLoop:
            ServerFailure(status: 502, message: "source redirects too often", originErrorKind: "redirects")
        case .invalidURL, .unsupportedScheme: ServerFailure(status: 400, message: "invalid source URL")
        case .dataProviderFailed: ServerFailure(status: 404, message: "source not found", originErrorKind: "local")
        case .cancelled, .cancelledByModifier: ServerFailure(status: 503, message: "cancelled")
        // The server's own disk, as a cache failure is.
        case .spoolFailed: ServerFailure(status: 500, message: "internal error")
        case .recentlyFailed(_, let previous): ServerFailure(mapping: previous)
        }
    }

    private static func response(_ reason: MagpieError.ResponseFailureReason) -> ServerFailure {
        switch reason {
        case .badStatus(let response) where response.statusCode == 404 || response.statusCode == 410:
            ServerFailure(status: 404, message: "source not found", originErrorKind: "status_404")
        case .badStatus(let response):
            ServerFailure(status: 502, message: "source answered \(response.statusCode)", originErrorKind: "status_\(response.statusCode / 100)xx")
        case .tooLarge: ServerFailure(status: 413, message: "source too large", originErrorKind: "too_large")
        case .truncated, .emptyBody: ServerFailure(status: 502, message: "source body incomplete", originErrorKind: "truncated")
        case .notAnImage: ServerFailure(status: 415, message: "source is not an image", originErrorKind: "not_an_image")
        case .undecodable(_, let reason): decoding(reason)
        }
    }

    private static func decoding(_ reason: MagpieError.DecodingFailureReason) -> ServerFailure {
        switch reason {
        case .unknownFormat, .unsupportedFormat: ServerFailure(status: 415, message: "unsupported source format")
        case .tooLarge(_, let message): ServerFailure(status: 422, message: "source too large: \(message)")
        case .emptyData, .corruptData, .truncatedData, .outOfMemory: ServerFailure(status: 422, message: "source cannot be decoded")
        // The server decodes bytes it holds, never a file by path; a file it cannot read is its own fault.
        case .unreadableFile: ServerFailure(status: 500, message: "source cannot be read")
        }
    }

    private static func processing(_ reason: MagpieError.ProcessingFailureReason) -> ServerFailure {
        switch reason {
        case .invalidSpecification(let part, let message): ServerFailure(status: 400, message: "\(part): \(message)")
        case .invalidParameter(let processor, let message): ServerFailure(status: 400, message: "\(processor): \(message)")
        case .processorFailed(let processor): ServerFailure(status: 422, message: "\(processor): cannot process this image")
        case .invalidTargetSize(let size): ServerFailure(status: 400, message: "invalid size \(size)")
        case .outputTooLarge(let processor, let size, _, let limit):
            ServerFailure(status: 422, message: "\(processor): result \(size) too large: \(limit)")
        case .cancelled: ServerFailure(status: 503, message: "cancelled")
        // Smart cropping falls back instead of throwing these; a detector's error reaching here is the server's fault.
        case .detectionFailed(let detector, _), .detectionOverBudget(let detector, _):
            ServerFailure(status: 500, message: "\(detector): detection failed")
        }
    }
}
