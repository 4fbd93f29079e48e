import Foundation
import MagpieCore
import Testing

/// The wave-2 codec libraries (libavif, libheif, libjxl, libtiff, librsvg and what they pull in) are opened on first
/// use, so a process that only meets JPEG, PNG, GIF or WebP never maps them (they cost a thumbnail worker ~12 MB of
/// resident pages). Checked in a fresh process (`magpie-library-check`): this one has met every format already.
@Suite("Codec libraries opened on first use")
struct LazyCodecLibraryTests {
    @Test func aFormatsLibraryIsMappedOnlyOnceThatFormatIsMet() async throws {
        // A HEIC from the corpus when it is present (Magpie does not encode HEIC).
        let heic = Corpus.rows.first { $0.format == "HEIF" && $0.expect == "decode" }?.url.path
        let run = try await ProcessRun.builtOffThePool("magpie-library-check", heic.map { [$0] } ?? [])
        #expect(run.status == 0, "\(run.stderr)")
        var steps: [String: Set<String>] = [:]
        for line in run.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            steps[String(parts[0])] = Set(parts[1].split(separator: ",").map(String.init))
        }
        #expect(steps["jpeg"] == [], "a JPEG round trip mapped \(steps["jpeg"] ?? [])")
        #expect(steps["avif"]?.contains("libavif") == true)
        #expect(steps["jxl"]?.contains("libjxl") == true)
        #expect(steps["tiff"]?.contains("libtiff") == true)
        #expect(steps["svg"]?.contains("librsvg") == true)
        // Each step maps its own library, not the next one's.
        #expect(steps["avif"]?.contains("libjxl") == false && steps["jxl"]?.contains("librsvg") == false)
        if heic != nil { #expect(steps["heic"]?.contains("libheif") == true) }
        // OpenCV comes with the face detector plugin, at the first detection and not before.
        #expect(steps["svg"]?.contains("libopencv_objdetect") == false)
        if FileManager.default.fileExists(atPath: FaceDetector.Configuration.defaultModelPath) {
            #expect(run.stdout.contains("faces-available=true"), "\(run.stdout)\n\(run.stderr)")
            #expect(steps["faces"]?.contains("libopencv_objdetect") == true)
        }
    }

    @Test func withoutTheFaceDetectorPluginSmartCropsGoOnWithoutFaces() throws {
        let run = try ProcessRun.built(
            "magpie-library-check", [],
            environment: ProcessInfo.processInfo.environment.merging(["MAGPIE_FACE_DETECTION_LIBRARY": "/nonexistent/libMagpieFaceDetection.so"]) { $1 })
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("faces-available=false"))
        #expect(!run.stdout.contains("libopencv"))
        // Said once, with the reason, however many times faces were asked for.
        let log = run.stdout + run.stderr
        #expect(log.components(separatedBy: "smart crops go without faces").count - 1 == 1, "\(log)")
        #expect(log.contains("/nonexistent/libMagpieFaceDetection.so"))
    }
}
