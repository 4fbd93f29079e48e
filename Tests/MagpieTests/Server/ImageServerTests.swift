import Foundation
import MagpieOrigin
import MagpieServer
import Testing

@testable import MagpieCore

/// `ImageServer` over real HTTP on 127.0.0.1 with the test origin: signing, options, formats, caching, statuses.
@Suite("ImageServer", .serialized)
struct ImageServerTests {
    private func decode(_ data: Data) throws -> Image {
        try ImageCoderRegistry.shared.decode(data)
    }

    @Test func aSignedRequestIsFetchedResizedAndEncodedWithCachingHeaders() async throws {
        try await ServerFixture.with { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "png"))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.header("Content-Type") == "image/png")
            #expect(answer.header("Content-Length") == String(answer.body.count))
            #expect(answer.header("Cache-Control") == "public, max-age=31536000")
            #expect(answer.header("ETag")?.hasPrefix("\"") == true)
            #expect(answer.header("Last-Modified") == OriginAsset.defaultLastModified)
            #expect(answer.header("Vary") == nil)
            let image = try decode(answer.body)
            #expect(image.pixelSize == PixelSize(width: 40, height: 30))
        }
    }

    @Test func aWrongSignatureIsRefusedWith403AndAnUnsignedOneToo() async throws {
        try await ServerFixture.with { fixture in
            let good = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"])
            let rest = good.drop(while: { $0 == "/" }).drop(while: { $0 != "/" })
            let forged = try await fixture.request("/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" + rest)
            #expect(forged.status == 403)
            let unsigned = try await fixture.request("/insecure" + rest)
            #expect(unsigned.status == 403)
            #expect(fixture.origin.totalRequests == 0)
        }
    }

    @Test func unsignedURLsAreServedOnlyWhenAllowed() async throws {
        try await ServerFixture.with(configure: { $0.allowsUnsigned = true }) { fixture in
            let good = fixture.imagePath("photo.jpg", options: ["resize:20x15:fit"])
            let rest = good.drop(while: { $0 == "/" }).drop(while: { $0 != "/" })
            let insecure = try await fixture.request("/insecure" + rest)
            let underscore = try await fixture.request("/_" + rest)
            #expect(insecure.status == 200)
            #expect(underscore.status == 200)
        }
    }

    @Test func aURLSignedWithTheSecondKeyOfARotationIsAccepted() async throws {
        let newKey = String(repeating: "ab", count: 32)
        let newSalt = String(repeating: "cd", count: 16)
        try await ServerFixture.with(configure: { $0.signingKeys.append((key: newKey, salt: newSalt)) }) { fixture in
            let signer = try ImageURLSigner(hexPairs: [(key: newKey, salt: newSalt)])
            let source = fixture.origin.url("/img/photo.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let path = "/resize:20x15:fit/plain/" + source
            let answer = try await fixture.request("/" + signer.signature(forPath: path) + path)
            #expect(answer.status == 200)
        }
    }

    @Test func anUnknownOptionIs400NamingThePart() async throws {
        try await ServerFixture.with { fixture in
            let answer = try await fixture.request(fixture.imagePath("photo.jpg", options: ["frobnicate:3"]))
            #expect(answer.status == 400)
            #expect(answer.text.contains("frobnicate"))
            #expect(answer.header("Cache-Control") == "no-store")
            #expect(fixture.origin.totalRequests == 0)
        }
    }

    @Test func autoFormatFollowsAcceptAndSaysVaryAccept() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"])
            let avif = try await fixture.request(path, headers: [("Accept", "image/avif,image/webp,*/*")])
            #expect(avif.header("Content-Type") == "image/avif")
            #expect(avif.header("Vary") == "Accept")
            let webp = try await fixture.request(path, headers: [("Accept", "image/webp,*/*")])
            #expect(webp.header("Content-Type") == "image/webp")
            #expect(webp.header("Vary") == "Accept")
            let plain = try await fixture.request(path, headers: [("Accept", "*/*")])
            #expect(plain.header("Content-Type") == "image/jpeg")
            #expect(plain.header("Vary") == "Accept")
            // Three formats, three results: each Accept class is its own cache entry, not a stale neighbour.
            #expect(ImageFormat(sniffing: avif.body) == .avif)
            #expect(ImageFormat(sniffing: webp.body) == .webp)
            #expect(ImageFormat(sniffing: plain.body) == .jpeg)
        }
    }

    @Test func aLongAcceptHeaderNegotiatesLikeAShortOne() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"])
            // Past the length whose key text the server remembers: worked out each time, same answer.
            let padding = (0..<60).map { "application/x-padding-\($0);q=0.1" }.joined(separator: ",")
            for accept in ["image/webp,*/*", padding + ",image/webp,*/*"] {
                let answer = try await fixture.request(path, headers: [("Accept", accept)])
                #expect(answer.header("Content-Type") == "image/webp", "\(accept.utf8.count) bytes")
            }
        }
    }

    @Test func aMatchingETagOrDateGets304WithoutABody() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "webp")
            let first = try await fixture.request(path)
            let etag = try #require(first.header("ETag"))
            let byTag = try await fixture.request(path, headers: [("If-None-Match", etag)])
            #expect(byTag.status == 304)
            #expect(byTag.body.isEmpty)
            #expect(byTag.header("ETag") == etag)
            let byDate = try await fixture.request(path, headers: [("If-Modified-Since", OriginAsset.defaultLastModified)])
            #expect(byDate.status == 304)
            let otherTag = try await fixture.request(path, headers: [("If-None-Match", "\"other\"")])
            #expect(otherTag.status == 200)
        }
    }

    @Test func headAnswersTheHeadersOfGetWithoutTheBody() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "png")
            let head = try await fixture.request(path, method: .HEAD)
            let get = try await fixture.request(path)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == String(get.body.count))
            #expect(head.header("ETag") == get.header("ETag"))
        }
    }

    @Test func repeatedRequestsComeFromMemoryThenFromDiskAfterARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-serve-restart-\(UUID().uuidString)")
        let root = folder.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try OriginFixture.jpeg.write(to: root.appendingPathComponent("photo.jpg"))
        defer { try? FileManager.default.removeItem(at: folder) }
        let configure: (inout ImageServerConfiguration) -> Void = {
            $0.cacheDirectory = folder.appendingPathComponent("cache")
            $0.localRoot = root.path
        }
        var firstBody = Data()
        try await ServerFixture.with(configure: configure) { fixture in
            let path = fixture.signed("/resize:40x30:fit/plain/local%3A%2F%2F%2Fphoto.jpg@png")
            let first = try await fixture.request(path)
            let second = try await fixture.request(path)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.header("X-Magpie-Cache") == "none")
            #expect(second.header("X-Magpie-Cache") == "memory")
            #expect(first.body == second.body)
            firstBody = first.body
        }
        try await ServerFixture.with(configure: configure) { fixture in
            let again = try await fixture.request(fixture.signed("/resize:40x30:fit/plain/local%3A%2F%2F%2Fphoto.jpg@png"))
            #expect(again.header("X-Magpie-Cache") == "disk")
            #expect(again.body == firstBody)
        }
    }

    @Test func remoteSourcesAreDownloadedOnceForTwoDifferentResults() async throws {
        try await ServerFixture.with { fixture in
            #expect(try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:40x30:fit"], extension: "png")).status == 200)
            let second = try await fixture.request(fixture.imagePath("photo.jpg", options: ["resize:20x15:fit"], extension: "png"))
            #expect(second.status == 200)
            #expect(second.header("X-Magpie-Cache") == "original")
            #expect(fixture.origin.requestCount(path: "/img/photo.jpg") == 1)
        }
    }

    @Test func identicalConcurrentRequestsShareOneDownloadAndOneResult() async throws {
        try await ServerFixture.with { fixture in
            let path = fixture.imagePath("noise.png", options: ["resize:64x64:fill", "blur:2"], extension: "webp")
            fixture.origin.hold("noise.png")
            let answers = try await withThrowingTaskGroup(of: ServerFixture.Answer.self) { group in
                for _ in 0..<6 { group.addTask { try await fixture.request(path) } }
                while fixture.origin.heldRequests < 1 { try await Task.sleep(for: .milliseconds(10)) }
                try await Task.sleep(for: .milliseconds(200))
                fixture.origin.release("noise.png")
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == 200 })
            #expect(Set(answers.compactMap { $0.header("ETag") }).count == 1)
            #expect(fixture.origin.requestCount(path: "/img/noise.png") == 1)
        }
    }
}
