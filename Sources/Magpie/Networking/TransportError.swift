import MagpieCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AsyncHTTPClient
import NIOCore
import NIOPosix
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
                return .requestFailed(reason: .connectionFailed(url, message: cause(of: error)))
            }
        }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
            return .requestFailed(reason: .tlsFailed(url, message: tlsCause(of: error)))
        }
        if case ChannelError.connectTimeout = error {
            return .requestFailed(reason: .timedOut(url, timeout: timeout))
        }
        return .requestFailed(reason: .connectionFailed(url, message: cause(of: error)))
    }

    /// Whether `error` says a connection could not be made, so nothing was sent on it: refused, unreachable, or not
    /// made within the connect timeout. A connection that broke later (reset, closed) is not one.
    static func isConnectFailure(_ error: any Error) -> Bool {
        switch error {
        case is NIOConnectionError:
            return true
        case let error as IOError:
            return [ECONNREFUSED, ENETUNREACH, ENETDOWN, EHOSTUNREACH, EHOSTDOWN, EADDRNOTAVAIL].contains(error.errnoCode)
        case let error as ChannelError:
            if case .connectTimeout = error { return true }
            return false
        case let error as HTTPClientError:
            return error == .connectTimeout
        default:
            return false
        }
    }

    /// A short lowercase cause for a connection that could not be made or broke ("connection refused", "host not
    /// found"): what a user can act on, without NIO's framing ("connection reset (error set): …", errno numbers,
    /// type names).
    static func cause(of error: any Error) -> String {
        switch error {
        case let error as IOError:
            return cause(errno: error.errnoCode)
        case let error as NIOConnectionError:
            // Every address tried failed: the first address's cause speaks for all (they are usually the same).
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "host not found" }
            return error.connectionErrors.first.map { cause(of: $0.error) } ?? "connection failed"
        case is SocketAddressError.UnknownHost:
            return "host not found"
        case let error as ChannelError:
            switch error {
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed: return "connection closed"
            case .connectTimeout: return "connection timed out"
            default: return "connection failed (\(error))"
            }
        case let error as HTTPClientError:
            switch error {
            case .remoteConnectionClosed: return "connection closed by the server"
            case .alreadyShutdown: return "the HTTP client was shut down"
            case .bodyLengthMismatch: return "body length does not match Content-Length"
            default:
                // HTTPClientError describes itself as "HTTPClientError.someCase": keep the case's name only.
                let name = String(describing: error)
                return name.hasPrefix("HTTPClientError.") ? String(name.dropFirst("HTTPClientError.".count)) : name
            }
        default:
            return String(describing: error)
        }
    }

    /// A short cause for a failed TLS handshake when it is a common one (an untrusted certificate, one for another
    /// host), else NIOSSL's own text.
    static func tlsCause(of error: any Error) -> String {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "the certificate is not for this host"
        }
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") { return "certificate not trusted" }
        return text
    }

    /// The cause an errno from a socket call stands for.
    static func cause(errno code: CInt) -> String {
        switch code {
        case ECONNREFUSED: "connection refused"
        case ECONNRESET: "connection reset"
        case ECONNABORTED: "connection aborted"
        case EPIPE: "connection closed"
        case ETIMEDOUT: "connection timed out"
        case ENETUNREACH: "network unreachable"
        case ENETDOWN: "network down"
        case EHOSTUNREACH: "host unreachable"
        case EHOSTDOWN: "host down"
        case EADDRNOTAVAIL: "address not available"
        default: String(cString: strerror(code)).lowercased()
        }
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
