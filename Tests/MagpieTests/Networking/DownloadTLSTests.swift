import Foundation
import MagpieOrigin
import NIOSSL
import Testing

@testable import Magpie
@testable import MagpieCore

/// HTTPS against a local origin whose certificate comes from a throw-away CA made with openssl.
@Suite("ImageDownloader: TLS, custom CA, client certificates, trusted hosts")
struct DownloadTLSTests {
    /// A CA, a server certificate for 127.0.0.1 and a client certificate, in a temporary folder.
    struct Certificates: Sendable {
        let folder: TemporaryFolder

        /// Made once for all tests, on a Dispatch thread: waiting for openssl on the cooperative
        /// pool (2 threads here) would stall every other test's server and timers.
        static let shared = Task {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Certificates, any Error>) in
                DispatchQueue.global().async { continuation.resume(with: Result { try Certificates() }) }
            }
        }

        private init() throws {
            folder = try TemporaryFolder()
            let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            try openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Magpie Test CA"])
            for (name, extensions) in [("server", "subjectAltName=IP:127.0.0.1,DNS:localhost"), ("client", "extendedKeyUsage=clientAuth")] {
                try openssl(["req"] + ec + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(name)"])
                try Data("basicConstraints=CA:FALSE\n\(extensions)\n".utf8).write(to: path("\(name).ext"))
                try openssl(["x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                             "-out", "\(name).pem", "-days", "2", "-extfile", "\(name).ext"])
            }
        }

        func path(_ name: String) -> URL { folder.url.appendingPathComponent(name) }
        func certificate(_ name: String) throws -> NIOSSLCertificate {
            guard let first = try NIOSSLCertificate.fromPEMFile(path("\(name).pem").path).first else { throw CocoaError(.fileReadCorruptFile) }
            return first
        }
        func key(_ name: String) throws -> NIOSSLPrivateKey { try NIOSSLPrivateKey(file: path("\(name).key").path, format: .pem) }

        private func openssl(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.currentDirectoryURL = folder.url
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw MagpieError.requestFailed(reason: .tlsFailed(folder.url, message: "openssl \(arguments[0]) failed")) }
        }
    }

    private func serve(_ certificates: Certificates, requireClientCertificate: Bool = false) async throws -> ImageOrigin {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try certificates.certificate("server"))], privateKey: .privateKey(try certificates.key("server")))
        if requireClientCertificate {
            tls.certificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates([try certificates.certificate("ca")])
        }
        return try await ImageOrigin.start(assets: OriginFixture.assets, tls: tls)
    }

    private func downloader(_ configure: (inout ImageDownloader.Configuration) throws -> Void) rethrows -> ImageDownloader {
        var configuration = ImageDownloader.Configuration()
        // A failed handshake is retried until the connect timeout: keep the failures quick.
        configuration.connectTimeout = .seconds(3)
        try configure(&configuration)
        return ImageDownloader(name: "tls", configuration: configuration)
    }

    @Test func untrustedCertificateIsATLSFailureByDefault() async throws {
        let certificates = try await Certificates.shared.value
        let origin = try await serve(certificates)
        let downloader = downloader { _ in }
        let url = URL(string: origin.url("/img/pic.png"))!
        let error = await magpieError { try await downloader.downloadData(with: url) }
        #expect(error.map { if case .requestFailed(.tlsFailed(url, _)) = $0 { true } else { false } } == true)
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func customCATrustsTheServer() async throws {
        let certificates = try await Certificates.shared.value
        let origin = try await serve(certificates)
        let downloader = try downloader { configuration in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try certificates.certificate("ca")])
            configuration.tlsConfiguration = tls
        }
        let result = try await downloader.downloadImage(with: URL(string: origin.url("/img/pic.png"))!)
        #expect(result.image.pixelSize == PixelSize(width: 64, height: 48))
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func trustedHostsSkipVerificationForThoseHostsOnly() async throws {
        let certificates = try await Certificates.shared.value
        let origin = try await serve(certificates)
        let downloader = downloader { $0.trustedHosts = ["127.0.0.1"] }
        let trusted = try await downloader.downloadData(with: URL(string: origin.url("/img/pic.png"))!)
        #expect(trusted.data == OriginFixture.png)
        // A downloader that trusts another host still verifies this one.
        let other = self.downloader { $0.trustedHosts = ["images.example"] }
        let error = await magpieError { try await other.downloadData(with: URL(string: origin.url("/img/pic.png"))!) }
        #expect(error.map { if case .requestFailed(.tlsFailed) = $0 { true } else { false } } == true)
        try await downloader.shutdown()
        try await other.shutdown()
        await origin.stop()
    }

    @Test func clientCertificateIsPresentedWhenConfigured() async throws {
        let certificates = try await Certificates.shared.value
        let origin = try await serve(certificates, requireClientCertificate: true)
        let url = URL(string: origin.url("/img/pic.png"))!
        let withCertificate = try downloader { configuration in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try certificates.certificate("ca")])
            tls.certificateChain = [.certificate(try certificates.certificate("client"))]
            tls.privateKey = .privateKey(try certificates.key("client"))
            configuration.tlsConfiguration = tls
        }
        #expect(try await withCertificate.downloadData(with: url).data == OriginFixture.png)
        let without = try downloader { configuration in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try certificates.certificate("ca")])
            configuration.tlsConfiguration = tls
        }
        #expect(await magpieError { try await without.downloadData(with: url) } != nil)
        try await withCertificate.shutdown()
        try await without.shutdown()
        await origin.stop()
    }
}
