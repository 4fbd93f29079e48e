import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import AsyncHTTPClient
import NIOCore
import NIOSSL

/// Turns errors from AsyncHTTPClient, NIO and NIOSSL into `MagpieError` reasons.
enum TransportError {
    static func map(_ error: any Error, url: URL, timeout: Duration) -> MagpieError {
        if let error = error as? MagpieError { return error }
        if error is CancellationError { return .requestFailed(reason: .cancelled(url)) }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return .requestFailed(reason: .cancelled(url))
            case .connectTimeout, .deadlineExceeded, .readTimeout, .writeTimeout, .getConnectionFromPoolTimeout:
                return .requestFailed(reason: .timedOut(url, timeout: timeout))
            case .tlsHandshakeTimeout:
                return .requestFailed(reason: .tlsFailed(url, message: "TLS handshake timed out"))
            case .invalidURL, .emptyHost, .emptyScheme:
                return .requestFailed(reason: .invalidURL(url.absoluteString))
            default:
                return .requestFailed(reason: .connectionFailed(url, message: String(describing: error)))
            }
        }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
            return .requestFailed(reason: .tlsFailed(url, message: String(describing: error)))
        }
        if let error = error as? IOError {
            return .requestFailed(reason: .connectionFailed(url, message: error.description))
        }
        if case ChannelError.connectTimeout = error {
            return .requestFailed(reason: .timedOut(url, timeout: timeout))
        }
        return .requestFailed(reason: .connectionFailed(url, message: String(describing: error)))
    }
}

extension TimeAmount {
    /// The same span as a NIO time amount (nanosecond precision).
    init(saturating duration: Duration) {
        let (seconds, attoseconds) = duration.components
        // Saturates: a timeout of centuries is "never", not an overflow trap.
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = overflow ? .nanoseconds(seconds < 0 ? .min : .max) : .nanoseconds(scaled &+ attoseconds / 1_000_000_000)
    }
}
