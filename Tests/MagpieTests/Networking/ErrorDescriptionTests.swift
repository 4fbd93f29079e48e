import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import Testing

@testable import Magpie
@testable import MagpieCore

/// Error texts read as one line with one cause, name the URL once, and keep their parentheses balanced.
struct ErrorDescriptionTests {
    let url = URL(string: "http://127.0.0.1:1/x.jpg")!

    func mapped(_ error: any Error) -> String {
        TransportError.map(error, url: url, timeout: .seconds(15)).description
    }

    @Test func aRefusedConnectionReadsConnectionRefusedForTheURL() {
        // What NIO reports for a refused connect: the reason text and errno must not leak into the message.
        let refused = IOError(errnoCode: ECONNREFUSED, reason: "connection reset (error set)")
        #expect(mapped(refused) == "request failed: connection refused for http://127.0.0.1:1/x.jpg")
    }

    @Test func connectionErrorsMapToShortCauses() {
        let causes: [(any Error, String)] = [
            (IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)"), "connection reset"),
            (IOError(errnoCode: ENETUNREACH, reason: "connect"), "network unreachable"),
            (IOError(errnoCode: EHOSTUNREACH, reason: "connect"), "host unreachable"),
            (IOError(errnoCode: EPIPE, reason: "write"), "connection closed"),
            (ChannelError.ioOnClosedChannel, "connection closed"),
            (HTTPClientError.remoteConnectionClosed, "connection closed by the server"),
        ]
        for (error, cause) in causes {
            #expect(mapped(error) == "request failed: \(cause) for \(url.absoluteString)", "\(error)")
        }
    }

    @Test func aCertificateForAnotherHostIsSaidInWords() {
        #expect(mapped(NIOSSLExtraError.failedToValidateHostname)
            == "request failed: TLS failed for http://127.0.0.1:1/x.jpg: the certificate is not for this host")
    }

    @Test func notAnImageSaysWhatTheContentTypeAndTheBytesAre() {
        let response = HTTPResponseInfo(url: url, statusCode: 200, headers: [
            HTTPHeaderField(name: "Content-Type", value: "text/html"),
        ])
        #expect(MagpieError.responseFailed(reason: .notAnImage(response, sniffed: .unknown)).description
            == "bad response: not an image (text/html; the bytes are not a known image format) from http://127.0.0.1:1/x.jpg")
        #expect(MagpieError.responseFailed(reason: .notAnImage(response, sniffed: .png)).description
            == "bad response: not an image (text/html; the bytes look like PNG) from http://127.0.0.1:1/x.jpg")
    }

    @Test func everyNetworkFailureNamesTheURLOnceWithBalancedParentheses() {
        let other = URL(string: "http://127.0.0.1:2/y.jpg")!
        let response = HTTPResponseInfo(url: url, statusCode: 200, headers: [
            HTTPHeaderField(name: "Content-Type", value: "text/html"),
        ])
        let file = URL(fileURLWithPath: "/tmp/magpie-missing.png")
        let reasons: [MagpieError] = [
            .requestFailed(reason: .unsupportedScheme(URL(string: "ftp://127.0.0.1:1/x.jpg")!)),
            .requestFailed(reason: .cancelledByModifier(url)),
            .requestFailed(reason: .cancelled(url)),
            .requestFailed(reason: .timedOut(url, timeout: .seconds(2))),
            .requestFailed(reason: .connectionFailed(url, message: "connection refused")),
            .requestFailed(reason: .tlsFailed(url, message: "certificate not trusted")),
            .requestFailed(reason: .tooManyRedirects(url, chain: [url, other, url])),
            .requestFailed(reason: .redirectLoop(url, chain: [url, other, url])),
            .requestFailed(reason: .redirectRefused(url, location: other)),
            .requestFailed(reason: .networkAccessRefused(url, reason: "127.0.0.1 is loopback")),
            .requestFailed(reason: .spoolFailed(url, path: "/var/cache/magpie/spool/12-34.part", message: "No space left on device")),
            .requestFailed(reason: .dataProviderFailed(
                cacheKey: file.absoluteString, message: "cannot read \(file.path): No such file or directory")),
            .responseFailed(reason: .badStatus(HTTPResponseInfo(url: url, statusCode: 404))),
            .responseFailed(reason: .notAnImage(response, sniffed: .unknown)),
            .responseFailed(reason: .tooLarge(response, limit: 10, declared: 20)),
            .responseFailed(reason: .truncated(response, expected: 20, received: 10)),
            .responseFailed(reason: .emptyBody(response)),
            .responseFailed(reason: .undecodable(response, reason: .truncatedData(.jpeg, message: "Premature end of JPEG file"))),
        ]
        for error in reasons {
            let text = error.description
            let named = error.url?.absoluteString ?? file.path
            #expect(text.components(separatedBy: named).count == 2, "\(text)")
            #expect(!text.contains("\n"), "\(text)")
            #expect(Self.balanced(text), "\(text)")
        }
        #expect(MagpieError.requestFailed(reason: .redirectLoop(url, chain: [url, other, url])).description
            == "request failed: redirect loop from \(url.absoluteString): \(other.absoluteString) -> back to it")
        #expect(MagpieError.requestFailed(reason: .dataProviderFailed(
            cacheKey: file.absoluteString, message: "cannot read \(file.path): No such file or directory")).description
            == "request failed: cannot read \(file.path): No such file or directory")
    }

    @Test func otherErrorDescriptionsAreOneLineWithBalancedParentheses() {
        let errors: [MagpieError] = [
            .decodingFailed(reason: .unknownFormat(leadingBytes: "3c 68 74 6d")),
            .decodingFailed(reason: .unsupportedFormat(.heic, detail: "no registered decoder")),
            .decodingFailed(reason: .corruptData(.jpeg, message: "Corrupt JPEG data: bad Huffman code")),
            .decodingFailed(reason: .tooLarge(.png, message: "20000x20000")),
            .encodingFailed(reason: .invalidOption("quality 0")),
            .imageCreationFailed(reason: .byteCountMismatch(expected: 16, actual: 8)),
            .processingFailed(reason: .outputTooLarge(processor: "resize", size: PixelSize(width: 9, height: 9), frames: 2,
                                                      limit: .pixelsPerFrame(10))),
            .processingFailed(reason: .outputTooLarge(processor: "blur:4", size: PixelSize(width: 9, height: 9), frames: 1,
                                                      limit: .workingBytes(needed: 2000, limit: 1000))),
            .encodingFailed(reason: .sizeNotEncodable(.jpeg, size: PixelSize(width: 1, height: 100_000),
                                                      limit: PixelSize(width: 65_500, height: 65_500))),
            .cacheFailed(reason: .cannotWrite(path: "/tmp/x", message: "No space left on device", diskFull: true)),
            .cacheFailed(reason: .entryTooLarge(key: "k", size: 10, limit: 5)),
        ]
        for error in errors {
            #expect(!error.description.contains("\n") && Self.balanced(error.description), "\(error)")
        }
    }

    /// Whether every `(` is closed by a later `)`.
    static func balanced(_ text: String) -> Bool {
        var depth = 0
        for character in text {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if depth < 0 { return false }
        }
        return depth == 0
    }
}
