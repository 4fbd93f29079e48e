import AsyncHTTPClient
import Dispatch
import Foundation
import Synchronization
import MagpieOrigin
import MagpieServer
import Testing

@testable import MagpieCore

/// thumbor's `smart` and imgproxy's `g:sm` in a running server, with the face detector: the face stays in the crop,
/// another size of the same photo is not examined again, and a crop made without its detection is answered but not
/// kept. The portrait is NASA's (Tests/Fixtures/faces/README.md); runs where Debian's opencv-data model is installed.
@Suite(.serialized, .enabled(if: FileManager.default.fileExists(atPath: FaceDetector.Configuration.defaultModelPath)))
struct SmartCropServerTests {
    /// The face's box in the 512 × 512 portrait (FaceDetectorTests.face).
    static let face = FaceDetectorTests.face

    static let assets: [String: OriginAsset] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/faces/astronaut.jpg")
        return ["portrait.jpg": OriginAsset(bytes: [UInt8]((try? Data(contentsOf: url)) ?? Data()), contentType: "image/jpeg")]
    }()

    static func with(
        budget: Duration = .seconds(5), beforeDetection: (@Sendable () -> Void)? = nil, _ body: (ServerFixture) async throws -> Void
    ) async throws {
        try await ServerFixture.with(extraAssets: assets, configure: {
            $0.allowsUnsigned = true
            $0.faceDetection?.budget = budget
            $0.beforeFaceDetection = beforeDetection
        }, body)
    }

    static func unsafe(_ fixture: ServerFixture, _ parts: String) -> String {
        "/unsafe/\(parts)/" + (fixture.origin.url("/img/portrait.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
    }

    /// The column where a full-height strip cut from the portrait starts: the offset whose pixels differ least.
    static func stripOffset(_ strip: Image, in source: Image) -> Int {
        var best = (offset: 0, difference: Int.max)
        for offset in 0...(source.width - strip.width) {
            var difference = 0
            for y in stride(from: 0, to: strip.height, by: 8) {
                for x in stride(from: 0, to: strip.width, by: 4) {
                    let a = strip.pixels[x, y], b = source.pixels[x + offset, y]
                    difference += abs(Int(a.red) - Int(b.red)) + abs(Int(a.green) - Int(b.green)) + abs(Int(a.blue) - Int(b.blue))
                }
            }
            if difference < best.difference { best = (offset, difference) }
        }
        return best.offset
    }

    /// The value of a `/metrics` series (0 when absent).
    static func metric(_ text: String, _ series: String) -> Double {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test func thumborsSmartCropKeepsTheFaceThatTheCentreCropCuts() async throws {
        try await Self.with { fixture in
            let source = try ImageCoderRegistry.shared.decode(Data(Self.assets["portrait.jpg"]!.bytes))
            // 150 × 512 out of 512 × 512: the centre strip starts at 181, past the face's left edge (172).
            let centre = try ImageCoderRegistry.shared.decode(try await fixture.request(Self.unsafe(fixture, "150x512")).body)
            #expect(Self.stripOffset(centre, in: source) > Int(Self.face.x))
            let answer = try await fixture.request(Self.unsafe(fixture, "150x512/smart"))
            #expect(answer.status == 200, "\(answer.text)")
            let smart = try ImageCoderRegistry.shared.decode(answer.body)
            #expect(smart.pixelSize == PixelSize(width: 150, height: 512))
            let offset = Self.stripOffset(smart, in: source)
            #expect(Double(offset) <= Self.face.x && Double(offset + 150) >= Self.face.x + Self.face.side, "strip at \(offset)")
            // imgproxy's g:sm uses the same detector.
            let imgproxy = try await fixture.request(
                "/insecure/rs:fill:150:512/g:sm/plain/" + fixture.origin.url("/img/portrait.jpg"))
            let imgproxyOffset = Self.stripOffset(try ImageCoderRegistry.shared.decode(imgproxy.body), in: source)
            #expect(Double(imgproxyOffset) <= Self.face.x && Double(imgproxyOffset + 150) >= Self.face.x + Self.face.side)
        }
    }

    @Test func anotherSizeOfTheSamePhotoIsNotExaminedAgainAndMetricsSaySo() async throws {
        try await Self.with { fixture in
            for parts in ["150x512/smart", "100x300/smart", "300x100/smart"] {
                #expect(try await fixture.request(Self.unsafe(fixture, parts)).status == 200)
            }
            let metrics = try await fixture.request("/metrics").text
            #expect(Self.metric(metrics, #"magpie_server_face_detections_total{outcome="faces"}"#) == 1, "\(metrics)")
            #expect(Self.metric(metrics, #"magpie_server_face_detections_total{outcome="cached"}"#) == 2)
            #expect(metrics.contains("magpie_server_face_detection_seconds"))
            // A plain crop never asks.
            #expect(try await fixture.request(Self.unsafe(fixture, "120x120")).status == 200)
            let after = try await fixture.request("/metrics").text
            #expect(Self.metric(after, #"magpie_server_face_detections_total{outcome="cached"}"#) == 2)
        }
    }

    @Test func aCropPastItsDetectionBudgetIsAnsweredBrieflyAndNotKept() async throws {
        // The first detection waits until its request has been answered, whatever the machine's load.
        let answered = DispatchSemaphore(value: 0)
        let isFirstDetection = Mutex(true)
        try await Self.with(budget: .milliseconds(20), beforeDetection: {
            if isFirstDetection.withLock({ let was = $0; $0 = false; return was }) { answered.wait() }
        }) { fixture in
            let path = Self.unsafe(fixture, "150x512/smart")
            let first = try await fixture.request(path)
            answered.signal()
            #expect(first.status == 200)
            #expect(first.header("Cache-Control") == "public, max-age=60")
            // The detection finished after the answer and was kept: the next request makes the face-aware crop, and
            // that one is kept.
            var metrics = ""
            for _ in 0..<100 {
                metrics = try await fixture.request("/metrics").text
                if Self.metric(metrics, #"magpie_server_face_detections_total{outcome="over_budget"}"#) == 1 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .milliseconds(500))
            let second = try await fixture.request(path)
            #expect(second.header("X-Magpie-Cache") != "memory", "the provisional crop was not kept")
            #expect(second.header("Cache-Control")?.contains("max-age=60") == false)
            let source = try ImageCoderRegistry.shared.decode(Data(Self.assets["portrait.jpg"]!.bytes))
            let offset = Self.stripOffset(try ImageCoderRegistry.shared.decode(second.body), in: source)
            #expect(Double(offset) <= Self.face.x && Double(offset + 150) >= Self.face.x + Self.face.side)
            #expect(try await fixture.request(path).header("X-Magpie-Cache") == "memory")
        }
    }
}
