import CImageCodecs
import Dispatch
import Logging
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Finds frontal faces with an OpenCV cascade classifier at thumbor's settings, for smart cropping (``SmartCropping``, ``GravityCropProcessor``, `magpie serve`'s thumbor `smart` and imgproxy `g:sm`).
///
/// It looks at a grey copy shrunk to ``Configuration/detectionSize``, answers each face as a region weighted by its area
/// and raised by a hair margin (as thumbor does), and keeps the answer per input (``focalRegions(in:sourceKey:)``
/// per source), so a second size of the same photo is not examined again. A detection that outlives
/// ``Configuration/budget`` makes the call throw (smart cropping then uses attention); it goes on and its answer is kept.
///
/// OpenCV is reached through a plugin the codec layer opens on first use (`libMagpieFaceDetection.so`, built beside
/// `magpie`). Without it, or without the model file, ``isAvailable`` is false, every call answers no regions, and the
/// log says why once.
public final class FaceDetector: FocalPointDetecting, Sendable {
    /// How faces are looked for.
    public struct Configuration: Sendable, Hashable {
        /// The cascade model: OpenCV's LBP frontal face cascade (Debian's `opencv-data`) by default, which on the
        /// 256-pixel copy costs a few milliseconds where thumbor's Haar model (`haarcascade_frontalface_alt.xml`, beside
        /// it) costs five times more for boxes within a few pixels of it (docs/BENCHMARKS.md).
        public var modelPath: String
        /// The longest side of the grey copy examined, in pixels; a larger image is shrunk to it first.
        public var detectionSize: Int
        /// How long a caller waits for a detection before smart cropping falls back to attention.
        public var budget: Duration
        /// How many inputs' answers are kept.
        public var cacheCapacity: Int
        /// The cascade's step between scales (thumbor: 1.2).
        public var scaleFactor: Double
        /// How many overlapping hits make a face (thumbor: 4).
        public var minimumNeighbors: Int
        /// How far above a face its region starts, as a fraction of its height (thumbor: 0.12, for the hair).
        public var hairMargin: Double

        /// Where Debian's `opencv-data` puts the default model.
        public static let defaultModelPath = "/usr/share/opencv4/lbpcascades/lbpcascade_frontalface.xml"
        /// thumbor's own model, where Debian's `opencv-data` puts it.
        public static let thumborModelPath = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt.xml"

        /// thumbor's settings, on a copy of at most 256 pixels, with a 300 ms budget.
        public init(
            modelPath: String = Configuration.defaultModelPath, detectionSize: Int = 256, budget: Duration = .milliseconds(300),
            cacheCapacity: Int = 1024, scaleFactor: Double = 1.2, minimumNeighbors: Int = 4, hairMargin: Double = 0.12
        ) {
            self.modelPath = modelPath
            self.detectionSize = detectionSize
            self.budget = budget
            self.cacheCapacity = cacheCapacity
            self.scaleFactor = scaleFactor
            self.minimumNeighbors = minimumNeighbors
            self.hairMargin = hairMargin
        }
    }

    /// What one call did, for metrics: `duration` is the caller's wait.
    public struct Report: Sendable {
        /// How a call ended.
        public enum Outcome: String, Sendable, CaseIterable {
            /// Examined; found faces.
            case faces
            /// Examined; found none.
            case none
            /// Answered from the kept answers (or another caller's detection of the same input).
            case cached
            /// No answer within the budget.
            case overBudget = "over_budget"
            /// The detector failed on this image.
            case failed
            /// Too many detections under way; this one was not started.
            case busy
            /// No plugin, OpenCV or model: faces are not looked for.
            case unavailable
        }

        /// How the call ended.
        public var outcome: Outcome
        /// How long the caller waited.
        public var duration: Duration
    }

    /// The settings.
    public let configuration: Configuration
    private let report: @Sendable (Report) -> Void
    private let cache: FocalRegionCache
    private let engine: Mutex<Engine>
    /// Loaded models not in use: a cascade classifier serves one thread at a time.
    private let idle = Mutex<[Model]>([])
    private let logger = Logger(label: "magpie.faces")

    private enum Engine {
        case unknown
        case ready
        case unavailable(String)
    }

    /// Runs before each detection on its thread (tests hold a detection past its caller's budget with it).
    private let beforeDetection: (@Sendable () -> Void)?

    /// A detector with `configuration`; `report` is told how every call ended (metrics), on the caller's thread.
    public convenience init(configuration: Configuration = Configuration(), report: @escaping @Sendable (Report) -> Void = { _ in }) {
        self.init(configuration: configuration, report: report, beforeDetection: nil)
    }

    /// A detector whose detections first run `beforeDetection` on their own thread (tests hold one past its budget).
    package init(configuration: Configuration, report: @escaping @Sendable (Report) -> Void, beforeDetection: (@Sendable () -> Void)?) {
        self.configuration = configuration
        self.report = report
        self.beforeDetection = beforeDetection
        cache = FocalRegionCache(
            capacity: configuration.cacheCapacity, maximumFlights: 4 * max(ProcessInfo.processInfo.activeProcessorCount, 1))
        engine = Mutex(.unknown)
    }

    /// Names the model and the settings that change answers; "faces(unavailable)" when faces are not looked for, so
    /// a crop made without them never shares a cache key with one made with them.
    public var identifier: String {
        guard isAvailable else { return "faces(unavailable)" }
        let model = configuration.modelPath.split(separator: "/").last.map(String.init) ?? configuration.modelPath
        return "faces(\(model),\(configuration.detectionSize),\(configuration.scaleFactor),\(configuration.minimumNeighbors),\(configuration.hairMargin))"
    }

    /// Whether the plugin, OpenCV and the model loaded (tried once, on the first call).
    public var isAvailable: Bool {
        if case .ready = prepareEngine() { return true }
        return false
    }

    /// Why faces are not looked for, or nil when they are.
    public var unavailableReason: String? {
        if case .unavailable(let reason) = prepareEngine() { return reason }
        return nil
    }

    /// How many inputs' answers are kept now.
    public var cachedCount: Int { cache.count }

    /// The faces in `image`, kept by the digest of the examined copy.
    public func focalRegions(in image: Image) throws -> [FocalRegion] {
        try focalRegions(in: image, sourceKey: nil)
    }

    /// The faces in `image`. With a `sourceKey` (the source's cache key and what was done to it before), the answer
    /// is kept for that source and the image's aspect ratio, so the same photo decoded at another scale is not
    /// examined again; without one, by the exact digest of the examined copy.
    ///
    /// - Throws: ``MagpieError/ProcessingFailureReason/detectionOverBudget(detector:budget:)`` or
    ///   ``MagpieError/ProcessingFailureReason/detectionFailed(detector:message:)``.
    public func focalRegions(in image: Image, sourceKey: String?) throws -> [FocalRegion] {
        let start = ContinuousClock.now
        guard case .ready = prepareEngine(), image.width > 0, image.height > 0 else {
            report(Report(outcome: .unavailable, duration: ContinuousClock.now - start))
            return []
        }
        let input = GreyCopy(image.pixels, longestSide: configuration.detectionSize)
        let key = sourceKey.map { "\($0)|\(input.aspect)" } ?? input.digest
        func finished(_ outcome: Report.Outcome) { report(Report(outcome: outcome, duration: ContinuousClock.now - start)) }
        let flight: FocalRegionCache.Flight
        var outcome = Report.Outcome.cached
        switch cache.lookup(key) {
        case .found(let regions):
            finished(.cached)
            return Self.regions(regions, in: image)
        case .busy:
            finished(.busy)
            throw MagpieError.processingFailed(reason: .detectionFailed(detector: "faces", message: "too many detections under way"))
        case .underWay(let other):
            flight = other
        case .detect(let own):
            flight = own
            outcome = .faces
            let cache = self.cache
            DispatchQueue.global(qos: .userInitiated).async { [self] in
                beforeDetection?()
                cache.finish(key, flight: own, with: Result { try detect(input) })
            }
        }
        switch flight.wait(timeout: configuration.budget) {
        case nil:
            finished(.overBudget)
            throw MagpieError.processingFailed(reason: .detectionOverBudget(detector: "faces", budget: configuration.budget))
        case .failure(let error)?:
            finished(.failed)
            throw MagpieError.processingFailed(reason: .detectionFailed(detector: "faces", message: "\(error)"))
        case .success(let regions)?:
            finished(outcome == .cached ? .cached : regions.isEmpty ? .none : .faces)
            return Self.regions(regions, in: image)
        }
    }

    /// Regions kept as fractions of the examined copy, in `image`'s pixels.
    private static func regions(_ fractions: [FocalRegion], in image: Image) -> [FocalRegion] {
        let width = Double(image.width), height = Double(image.height)
        return fractions.map {
            FocalRegion(x: $0.x * width, y: $0.y * height, width: $0.width * width, height: $0.height * height,
                        weight: $0.width * width * $0.height * height)
        }
    }

    /// Runs the cascade on `input` with a free model; the faces as fractions of its sides, the hair margin added.
    private func detect(_ input: GreyCopy) throws -> [FocalRegion] {
        let model = try takeModel()
        defer { idle.withLock { $0.append(model) } }
        // thumbor's smallest face: a fifteenth of the shorter side, at least 20 pixels.
        let minimumSize = max(20, min(input.width, input.height) / 15)
        let capacity = 64
        var faces = [mg_face_rect](repeating: mg_face_rect(), count: capacity)
        var count: Int32 = 0
        var error = mg_error()
        let status = input.grey.withUnsafeBufferPointer { grey in
            faces.withUnsafeMutableBufferPointer { faces in
                mg_faces_detect(
                    model.handle, grey.baseAddress, UInt32(input.width), UInt32(input.height), input.width,
                    configuration.scaleFactor, Int32(configuration.minimumNeighbors), Int32(minimumSize),
                    faces.baseAddress, Int32(capacity), &count, &error)
            }
        }
        guard status == MG_OK else { throw MagpieError.processingFailed(reason: .detectionFailed(detector: "faces", message: error.text)) }
        let width = Double(input.width), height = Double(input.height)
        return faces.prefix(Int(count)).map { face in
            let margin = Double(face.height) * configuration.hairMargin
            // thumbor moves a face's region up by the margin unless that would leave the image.
            let top = Double(face.y) - margin < 0 ? Double(face.y) : Double(face.y) - margin
            return FocalRegion(
                x: Double(face.x) / width, y: top / height, width: Double(face.width) / width,
                height: Double(face.height) / height, weight: 1)
        }
    }

    /// An idle model, or a new one.
    private func takeModel() throws -> Model {
        if let model = idle.withLock({ $0.popLast() }) { return model }
        var error = mg_error()
        guard let handle = configuration.modelPath.withCString({ mg_faces_open($0, &error) }) else {
            throw MagpieError.processingFailed(reason: .detectionFailed(detector: "faces", message: error.text))
        }
        return Model(handle: handle)
    }

    /// Loads the plugin and the model once; logs once when faces cannot be looked for.
    private func prepareEngine() -> Engine {
        engine.withLock { engine in
            guard case .unknown = engine else { return engine }
            var error = mg_error()
            if !mg_faces_available(&error) {
                engine = .unavailable(error.text)
            } else if let handle = configuration.modelPath.withCString({ mg_faces_open($0, &error) }) {
                idle.withLock { $0.append(Model(handle: handle)) }
                engine = .ready
            } else {
                engine = .unavailable("the face model \(configuration.modelPath) could not be loaded: \(error.text)")
            }
            if case .unavailable(let reason) = engine {
                logger.warning("smart crops go without faces", metadata: ["reason": "\(reason)"])
            }
            return engine
        }
    }
}

/// One loaded cascade model; closed when the last reference goes.
private final class Model: @unchecked Sendable {
    // Used by one thread at a time: FaceDetector takes it out of its idle list for a detection.
    let handle: OpaquePointer

    init(handle: OpaquePointer) { self.handle = handle }

    deinit { mg_faces_close(handle) }
}

/// The copy a detector examines: grey as PIL's "L" mode (ITU-R 601 luma, alpha ignored, as thumbor converts),
/// box-averaged to at most `longestSide`; its digest, and its aspect ratio.
struct GreyCopy: Sendable {
    let width: Int
    let height: Int
    let grey: [UInt8]

    init(_ pixels: PixelBuffer, longestSide: Int) {
        let scale = min(1, Double(max(longestSide, 1)) / Double(max(pixels.width, pixels.height)))
        width = max(1, Int((Double(pixels.width) * scale).rounded()))
        height = max(1, Int((Double(pixels.height) * scale).rounded()))
        var sums = [UInt32](repeating: 0, count: width * height)
        var counts = [UInt32](repeating: 0, count: width * height)
        let (sourceWidth, sourceHeight, width, height) = (pixels.width, pixels.height, width, height)
        // Each source column's cell, worked out once rather than divided out per pixel.
        let columns = (0..<sourceWidth).map { $0 * width / sourceWidth }
        pixels.withUnsafeBytes { raw in
            let source = raw.bindMemory(to: UInt8.self)
            for y in 0..<sourceHeight {
                let row = (y * height / sourceHeight) * width
                var index = y * sourceWidth * 4
                for x in 0..<sourceWidth {
                    let luma = (UInt32(source[index]) * 299 + UInt32(source[index + 1]) * 587 + UInt32(source[index + 2]) * 114 + 500) / 1000
                    let cell = row + columns[x]
                    sums[cell] &+= luma
                    counts[cell] &+= 1
                    index += 4
                }
            }
        }
        grey = zip(sums, counts).map { UInt8(($0.0 + $0.1 / 2) / max($0.1, 1)) }
    }

    /// SHA-256 of the size and the grey bytes.
    var digest: String {
        var hash = SHA256Hash()
        hash.update("\(width)x\(height)".utf8)
        hash.update(grey)
        return "grey:" + lowercaseHex(hash.finalize())
    }

    /// The aspect ratio to two places: with the source's key (which names what was done to the source before), the
    /// same photo decoded at another scale gives the same text, and needs no second detection.
    var aspect: String {
        String((Double(width) / Double(height) * 100).rounded() / 100)
    }
}

extension mg_error {
    /// The message the C layer wrote.
    var text: String {
        withUnsafeBytes(of: message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
