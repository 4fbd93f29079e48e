import Dispatch
import Foundation
import Synchronization
import Testing
@testable import MagpieCore

/// The face detector behind smart crops: OpenCV's cascade through the plugin, on a real portrait (NASA's photo of
/// astronaut Eileen Collins, public domain, as scikit-image ships it: Tests/Fixtures/faces/README.md). Runs where
/// Debian's opencv-data model is installed (CI installs it); there the plugin must load, or these fail.
@Suite(.enabled(if: FileManager.default.fileExists(atPath: FaceDetector.Configuration.defaultModelPath)))
struct FaceDetectorTests {
    static let astronaut: Image = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/faces/astronaut.jpg")
        // Loaded once; a missing fixture fails every test that uses it, not the suite's set-up.
        return (try? ImageCoderRegistry.shared.decode(Data(contentsOf: url))) ?? Image(pixels: try! PixelBuffer(width: 1, height: 1))
    }()

    /// Where OpenCV 4.6's `haarcascade_frontalface_alt` (thumbor's model) finds the face at thumbor's settings (1.2, 4,
    /// min 34 px) in the 512 × 512 original: x 172, y 62, 104 × 104. The default LBP model on the 256-pixel copy finds
    /// it within a few pixels of that (170, 64, 102 × 102, in the original's pixels).
    static let face = (x: 172.0, y: 62.0, side: 104.0)

    /// Settings whose budget no loaded machine reaches: only the budget's own test depends on time.
    static let patient = FaceDetector.Configuration(budget: .seconds(120))

    /// A detector that records each call's outcome.
    final class Recorder: Sendable {
        let outcomes = Mutex<[FaceDetector.Report.Outcome]>([])
        func detector(_ configuration: FaceDetector.Configuration = FaceDetectorTests.patient) -> FaceDetector {
            FaceDetector(configuration: configuration) { report in self.outcomes.withLock { $0.append(report.outcome) } }
        }
        var recorded: [FaceDetector.Report.Outcome] { outcomes.withLock { $0 } }
    }

    @Test func findsThePortraitsFaceWhereOpenCVDoesRaisedByTheHairMargin() throws {
        #expect(Self.astronaut.width == 512)
        let detector = FaceDetector(configuration: Self.patient)
        #expect(detector.isAvailable, "\(detector.unavailableReason ?? "")")
        let regions = try detector.focalRegions(in: Self.astronaut)
        let face = try #require(regions.first)
        #expect(regions.count == 1)
        #expect(abs(face.x - Self.face.x) <= 6 && abs(face.width - Self.face.side) <= 10)
        // thumbor moves the region up by 12 % of its height.
        #expect(abs(face.y - (Self.face.y - 0.12 * face.height)) <= 6)
        #expect(face.weight == face.width * face.height)
    }

    @Test func thumborsHaarModelFindsTheSameFace() throws {
        let detector = FaceDetector(configuration: FaceDetector.Configuration(modelPath: FaceDetector.Configuration.thumborModelPath, detectionSize: 512, budget: .seconds(120)))
        let face = try #require(try detector.focalRegions(in: Self.astronaut).first)
        #expect(abs(face.x - Self.face.x) <= 2 && abs(face.width - Self.face.side) <= 2)
        #expect(detector.identifier.hasPrefix("faces(haarcascade_frontalface_alt.xml,512,"))
    }

    @Test func aSmartCropKeepsTheFaceWhereAttentionAloneNeedNot() throws {
        let detector = FaceDetector(configuration: Self.patient)
        for size in [PixelSize(width: 160, height: 512), PixelSize(width: 512, height: 180), PixelSize(width: 200, height: 200)] {
            let cropped = try #require(try GravityCropProcessor(size: size, gravity: Gravity(.smart), detector: detector)
                .process(item: .image(Self.astronaut), context: .default))
            #expect(cropped.pixelSize == size)
            let origin = SmartCropping.gravity(in: Self.astronaut.pixels, crop: size, detector: detector)
                .placement(outer: Self.astronaut.pixelSize, inner: size, offsetScale: 1)
            // The whole face (the cascade's box) is inside the crop.
            #expect(Double(origin.x) <= Self.face.x && Double(origin.x + size.width) >= Self.face.x + Self.face.side, "\(size)")
            #expect(Double(origin.y) <= Self.face.y && Double(origin.y + size.height) >= Self.face.y + Self.face.side, "\(size)")
        }
    }

    @Test func anotherScaleOfTheSameSourceIsAnsweredFromTheKeptRegions() throws {
        let recorder = Recorder()
        let detector = recorder.detector()
        let full = try detector.focalRegions(in: Self.astronaut, sourceKey: "astronaut")
        let half = try #require(try ResizingImageProcessor(referenceSize: PixelSize(width: 256, height: 256), mode: .none)
            .process(item: .image(Self.astronaut), context: .default))
        let scaled = try detector.focalRegions(in: half, sourceKey: "astronaut")
        #expect(recorder.recorded == [.faces, .cached])
        #expect(scaled.count == full.count)
        #expect(abs(scaled[0].x * 2 - full[0].x) < 1 && abs(scaled[0].width * 2 - full[0].width) < 1)
        // Without a source key the exact copy is the key: the same image again is kept, another source is not.
        _ = try detector.focalRegions(in: Self.astronaut)
        _ = try detector.focalRegions(in: Self.astronaut)
        _ = try detector.focalRegions(in: half, sourceKey: "another photo")
        #expect(recorder.recorded == [.faces, .cached, .faces, .cached, .faces])
    }

    @Test func anImageWithoutFacesAnswersNoneAndSmartCroppingUsesAttention() throws {
        let recorder = Recorder()
        let detector = recorder.detector()
        let gradient = Image(pixels: try TestImages.gradient(width: 300, height: 200))
        #expect(try detector.focalRegions(in: gradient).isEmpty)
        #expect(recorder.recorded == [.none])
        let withDetector = SmartCropping.focusPoint(in: gradient.pixels, crop: PixelSize(width: 100, height: 200), detector: detector)
        let attention = SmartCropping.focusPoint(in: gradient.pixels, crop: PixelSize(width: 100, height: 200))
        #expect(withDetector == attention)
    }

    @Test func aDetectionPastItsBudgetThrowsAndItsAnswerIsKeptForTheNextCall() async throws {
        let recorder = Recorder()
        // The detection waits until its caller has given up, whatever the machine's load.
        let callerGaveUp = DispatchSemaphore(value: 0)
        let budget = Duration.milliseconds(20)
        let detector = FaceDetector(
            configuration: FaceDetector.Configuration(budget: budget),
            report: { report in recorder.outcomes.withLock { $0.append(report.outcome) } },
            beforeDetection: { callerGaveUp.wait() })
        #expect(throws: MagpieError.processingFailed(reason: .detectionOverBudget(detector: "faces", budget: budget))) {
            try detector.focalRegions(in: Self.astronaut, sourceKey: "slow")
        }
        callerGaveUp.signal()
        // The detection went on without its caller.
        for _ in 0..<200 where detector.cachedCount == 0 { try await Task.sleep(for: .milliseconds(25)) }
        #expect(detector.cachedCount == 1)
        #expect(try detector.focalRegions(in: Self.astronaut, sourceKey: "slow").count == 1)
        #expect(recorder.recorded == [.overBudget, .cached])
        // Bound to a source, the fallback is remembered, so a server knows not to keep that crop.
        let held = DispatchSemaphore(value: 0)
        let slow = FaceDetector(configuration: FaceDetector.Configuration(budget: budget), report: { _ in }, beforeDetection: { held.wait() })
        let bound = SourceBoundDetector(slow, sourceKey: "slow")
        _ = SmartCropping.focusPoint(in: Self.astronaut.pixels, crop: PixelSize(width: 100, height: 100), detector: bound)
        held.signal()
        #expect(bound.didFallBack)
    }

    @Test func aMissingModelLooksForNoFacesSaysWhyAndNamesItselfApart() throws {
        let recorder = Recorder()
        let detector = recorder.detector(FaceDetector.Configuration(modelPath: "/nonexistent/model.xml"))
        #expect(!detector.isAvailable)
        #expect(detector.unavailableReason?.contains("/nonexistent/model.xml") == true)
        #expect(detector.identifier == "faces(unavailable)")
        #expect(FaceDetector(configuration: Self.patient).identifier.hasPrefix("faces(lbpcascade_frontalface.xml,256,"))
        #expect(try detector.focalRegions(in: Self.astronaut).isEmpty)
        #expect(recorder.recorded == [.unavailable])
    }

    @Test(arguments: [(1, 1), (3, 500), (500, 3), (19, 19), (40, 25)])
    func imagesTooSmallForAFaceAnswerNone(width: Int, height: Int) throws {
        let tiny = Image(pixels: try TestImages.gradient(width: width, height: height))
        #expect(try FaceDetector(configuration: Self.patient).focalRegions(in: tiny).isEmpty)
    }

    @Test func aFlatImageIsCroppedAtItsCentre() throws {
        let flat = try PixelBuffer(width: 90, height: 60, fill: RGBAColor(red: 40, green: 90, blue: 200))
        let point = SmartCropping.focusPoint(in: flat, crop: PixelSize(width: 30, height: 30))
        #expect(point.x == 0.5 && point.y == 0.5)
    }
}
