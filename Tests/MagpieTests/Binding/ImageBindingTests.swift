import Dispatch
import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

@Suite("View binding: placeholder, stale results, cancellation, indicator, callback queue")
struct ImageBindingTests {
    /// A local origin, a cache in a temporary folder and a manager made for one test.
    struct Fixture {
        let origin: ImageOrigin
        let folder: TemporaryFolder
        let manager: ImageManager

        static func start() async throws -> Fixture {
            let origin = try await OriginFixture.start()
            let folder = try TemporaryFolder()
            let cache = ImageCache(name: "binding", diskConfig: DiskStorage.Config(name: "binding", directory: folder.url))
            let downloader = ImageDownloader(name: "binding")
            return Fixture(origin: origin, folder: folder, manager: ImageManager(downloader: downloader, cache: cache))
        }

        private init(origin: ImageOrigin, folder: TemporaryFolder, manager: ImageManager) {
            self.origin = origin
            self.folder = folder
            self.manager = manager
        }

        func target(showing image: Image? = nil) -> HeadlessImageTarget {
            let target = HeadlessImageTarget(image: image)
            target.mg.manager = manager
            return target
        }

        func url(_ path: String) -> URL { URL(string: origin.url(path))! }

        /// ~260 KB in 4 KB chunks 30 ms apart: about two seconds, long enough to be overtaken.
        var slowURL: URL { url("/slow/noise.png?chunk=4096&delay=30") }

        func stop() async throws {
            try await manager.downloader?.shutdown()
            await origin.stop()
            folder.cleanUp()
        }
    }

    static let placeholder = solid(RGBAColor(red: 255, green: 0, blue: 0))
    static let otherPlaceholder = solid(RGBAColor(red: 0, green: 0, blue: 255))
    static let failureImage = solid(RGBAColor(red: 0, green: 0, blue: 0))
    static let oldImage = solid(RGBAColor(red: 0, green: 255, blue: 0))
    /// The pixels of `pic.png`, which the origin serves losslessly.
    static let picPixels = try! TestImages.gradient(width: 64, height: 48)

    static func solid(_ color: RGBAColor) -> Image { Image(pixels: try! PixelBuffer(width: 2, height: 2, fill: color)) }

    static func isPic(_ image: Image?) -> Bool { image?.frames.first?.pixels == picPixels }

    @Test func placeholderIsShownAtOnceThenReplacedByTheLoadedImage() async throws {
        let fixture = try await Fixture.start()
        let target = fixture.target()
        let done = Completions()
        let url = fixture.url("/img/pic.png")
        let task = try #require(target.mg.setImage(with: url, placeholder: Self.placeholder, completionHandler: done.handler))
        #expect(target.displayedImage == Self.placeholder)
        #expect(target.mg.sourceURL == url)
        #expect(target.mg.taskIdentifier != nil)
        await task.wait()

        let result = try done.single().get()
        #expect(Self.isPic(result.image))
        #expect(Self.isPic(target.displayedImage))
        #expect(target.displayHistory == [Self.placeholder, result.image])
        #expect(!target.imageBinding.isLoading)
        try await fixture.stop()
    }

    @Test func withoutAPlaceholderTheOldImageIsClearedWhileLoading() async throws {
        let fixture = try await Fixture.start()
        let target = fixture.target(showing: Self.oldImage)
        let done = Completions()
        let task = try #require(target.mg.setImage(with: fixture.url("/img/pic.png"), completionHandler: done.handler))
        #expect(target.displayedImage == nil)
        await task.wait()
        #expect(target.displayHistory.count == 2)
        #expect(target.displayHistory.first == .some(nil))
        #expect(Self.isPic(target.displayHistory.last ?? nil))
        _ = try done.single().get()
        try await fixture.stop()
    }

    @Test func keepCurrentImageWhileLoadingKeepsTheOldImageAndSkipsThePlaceholder() async throws {
        let fixture = try await Fixture.start()
        let showing = fixture.target(showing: Self.oldImage)
        let empty = fixture.target()
        let done = Completions()
        let url = fixture.url("/img/pic.png")
        let options: [MagpieOption] = [.keepCurrentImageWhileLoading]
        let first = try #require(showing.mg.setImage(with: url, placeholder: Self.placeholder, options: options, completionHandler: done.handler))
        #expect(showing.displayedImage == Self.oldImage)
        await first.wait()
        #expect(showing.displayHistory.count == 1)
        #expect(Self.isPic(showing.displayedImage))

        // With nothing on screen to keep, the placeholder is still shown.
        let second = try #require(empty.mg.setImage(with: url, placeholder: Self.placeholder, options: options, completionHandler: done.handler))
        await second.wait()
        #expect(empty.displayHistory.first == Self.placeholder)
        #expect(Self.isPic(empty.displayedImage))
        #expect(done.count == 2)
        try await fixture.stop()
    }

    @Test func aSlowResultOvertakenByANewerRequestIsNeverDisplayed() async throws {
        let fixture = try await Fixture.start()
        let target = fixture.target()
        let indicator = RecordingIndicator()
        target.mg.indicator = indicator
        let slow = Completions(), fast = Completions()
        let slowTask = try #require(target.mg.setImage(with: fixture.slowURL, placeholder: Self.placeholder, completionHandler: slow.handler))
        let fastURL = fixture.url("/img/pic.png")
        let fastTask = try #require(target.mg.setImage(with: fastURL, placeholder: Self.otherPlaceholder, completionHandler: fast.handler))
        await slowTask.wait()
        await fastTask.wait()

        #expect(Self.isPic(try fast.single().get().image))
        let slowResult = try slow.single()
        guard case .failure(.imageSettingFailed(reason: .notCurrentSourceTask(_, _, let source))) = slowResult else {
            Issue.record("the slow request's completion should report notCurrentSourceTask, got \(slowResult)")
            return
        }
        #expect(source.url == fixture.slowURL)
        #expect(!target.displayHistory.contains { $0?.pixelSize == PixelSize(width: 256, height: 256) })
        #expect(target.displayHistory.count == 3)
        #expect(Array(target.displayHistory.prefix(2)) == [Self.placeholder, Self.otherPlaceholder])
        #expect(Self.isPic(target.displayedImage))
        #expect(target.mg.sourceURL == fastURL)
        // The newer request took the running indicator over: one start, one stop.
        #expect(indicator.starts == 1 && indicator.stops == 1 && indicator.events.last == .stop)
        try await fixture.stop()
    }

    @Test func aSuccessDeliveredForAReplacedRequestIsReportedNotCurrentAndNotDisplayed() async throws {
        let fixture = try await Fixture.start()
        let target = fixture.target()
        let loaded = Completions()
        let url = fixture.url("/img/pic.png")
        await target.mg.setImage(with: url, completionHandler: loaded.handler)?.wait()
        let image = try loaded.single().get()

        // Request A is replaced by B; then A's (successful) result arrives, as a late download would.
        target.mg.setImage(with: fixture.slowURL, placeholder: Self.placeholder)
        let replaced = try #require(target.mg.taskIdentifier)
        let current = try #require(target.mg.setImage(with: fixture.slowURL, placeholder: Self.otherPlaceholder))
        let outcome = target.imageBinding.finish(
            replaced, source: .network(fixture.slowURL), result: .success(image), target: target, onFailureImage: nil)
        guard case .failure(.imageSettingFailed(reason: .notCurrentSourceTask(let result?, nil, _))) = outcome else {
            Issue.record("expected notCurrentSourceTask carrying the result, got \(outcome)")
            return
        }
        #expect(Self.isPic(result.image))
        #expect(target.displayedImage == Self.otherPlaceholder)
        #expect(target.displayHistory.suffix(2) == [Self.placeholder, Self.otherPlaceholder])
        current.cancel()
        await current.wait()
        try await fixture.stop()
    }

    @Test func cancelDownloadTaskReportsCancellationOnceAndKeepsThePlaceholder() async throws {
        let fixture = try await Fixture.start()
        let target = fixture.target()
        let indicator = RecordingIndicator()
        target.mg.indicator = indicator
        let done = Completions()
        let task = try #require(target.mg.setImage(
            with: fixture.slowURL, placeholder: Self.placeholder, options: [.onFailureImage(Self.failureImage)],
            completionHandler: done.handler))
        target.mg.cancelDownloadTask()
        #expect(indicator.events == [.start, .stop])
        await task.wait()

        guard case .failure(let error) = try done.single() else {
            Issue.record("a cancelled request must not succeed")
            return
        }
        #expect(error.isCancellation)
        #expect(target.displayHistory == [Self.placeholder])
        #expect(indicator.starts == 1 && indicator.stops == 1)
        #expect(!target.imageBinding.isLoading)
        try await fixture.stop()
    }

    @Test func aNilSourceCancelsTheRequestShowsThePlaceholderAndReportsEmptySource() async throws {
        let fixture = try await Fixture.start()
        let target = fixture.target(showing: Self.oldImage)
        let slow = Completions(), empty = Completions()
        let slowTask = try #require(target.mg.setImage(with: fixture.slowURL, placeholder: Self.placeholder, completionHandler: slow.handler))
        let none = target.mg.setImage(with: nil, placeholder: Self.otherPlaceholder, completionHandler: empty.handler)
        #expect(none == nil)
        let emptyResult = try empty.single()
        guard case .failure(.imageSettingFailed(reason: .emptySource)) = emptyResult else {
            Issue.record("expected emptySource, got \(emptyResult)")
            return
        }
        #expect(target.displayedImage == Self.otherPlaceholder)
        #expect(target.mg.taskIdentifier == nil)
        #expect(target.mg.sourceURL == nil)

        await slowTask.wait()
        let slowResult = try slow.single()
        guard case .failure(.imageSettingFailed(reason: .notCurrentSourceTask)) = slowResult else {
            Issue.record("expected notCurrentSourceTask, got \(slowResult)")
            return
        }
        #expect(target.displayHistory == [Self.placeholder, Self.otherPlaceholder])
        try await fixture.stop()
    }

    @Test func aFailedLoadDisplaysOnFailureImageOnlyWhenAsked() async throws {
        let fixture = try await Fixture.start()
        let withImage = fixture.target(), clearing = fixture.target(), plain = fixture.target()
        let done = Completions()
        await withImage.mg.setImage(
            with: fixture.url("/status/404"), placeholder: Self.placeholder, options: [.onFailureImage(Self.failureImage)],
            completionHandler: done.handler)?.wait()
        await clearing.mg.setImage(
            with: fixture.url("/status/410"), placeholder: Self.placeholder, options: [.onFailureImage(nil)],
            completionHandler: done.handler)?.wait()
        await plain.mg.setImage(with: fixture.url("/status/500"), placeholder: Self.placeholder, completionHandler: done.handler)?.wait()

        #expect(withImage.displayHistory == [Self.placeholder, Self.failureImage])
        #expect(clearing.displayHistory == [Self.placeholder, nil])
        #expect(plain.displayHistory == [Self.placeholder])
        #expect(done.count == 3)
        for result in done.all {
            guard case .failure(.responseFailed) = result else {
                Issue.record("expected a response failure, got \(result)")
                continue
            }
        }
        try await fixture.stop()
    }

    @Test func theIndicatorRunsOnceAroundTheRequestAndGetsItsProgress() async throws {
        let fixture = try await Fixture.start()
        let target = fixture.target()
        let indicator = RecordingIndicator()
        target.mg.indicator = indicator
        let progress = Recorded<Int>()
        let done = Completions()
        await target.mg.setImage(
            with: fixture.url("/slow/noise.png?chunk=32768&delay=20"), progressBlock: { received, _ in progress.append(Int(received)) },
            completionHandler: done.handler)?.wait()

        #expect(try done.single().get().image.pixelSize == PixelSize(width: 256, height: 256))
        let events = indicator.events
        #expect(events.first == .start && events.last == .stop)
        #expect(indicator.starts == 1 && indicator.stops == 1)
        let received = events.compactMap { event -> Int? in if case .progress(let bytes) = event { bytes } else { nil } }
        #expect(received.count >= 2)
        #expect(received == received.sorted())
        #expect(received.last == OriginFixture.noisePNG.count)
        #expect(progress.all.sorted() == received)
        try await fixture.stop()
    }

    @Test func completionRunsOnTheCallbackQueue() async throws {
        let fixture = try await Fixture.start()
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "binding.callbacks")
        queue.setSpecific(key: key, value: "binding")
        let onQueue = Recorded<Bool>()
        let record: @Sendable (Result<RetrieveImageResult, MagpieError>) -> Void = { _ in
            onQueue.append(DispatchQueue.getSpecific(key: key) == "binding")
        }
        let options: [MagpieOption] = [.callbackQueue(.dispatch(queue))]
        let target = fixture.target()
        target.mg.setImage(with: fixture.slowURL, options: options, completionHandler: record)
        target.mg.setImage(with: fixture.url("/img/pic.png"), options: options, completionHandler: record)
        target.mg.setImage(with: nil, options: options, completionHandler: record)
        try await pollUntil { onQueue.all.count == 3 }
        queue.sync {}
        #expect(onQueue.all == [true, true, true])
        try await fixture.stop()
    }

    @Test func displayAndIndicatorRunOutsideTheBindingLockSoTheyMayCallBackIntoIt() async throws {
        /// A target whose display asks its own binding (a lock a display under the lock would deadlock on),
        /// and on the loaded image starts another request from inside display.
        final class ReentrantTarget: ImageTarget {
            let imageBinding = ImageBinding()
            let seen = Mutex<[(image: Image?, loading: Bool)]>([])
            let next: URL
            init(next: URL) { self.next = next }
            var displayedImage: Image? { seen.withLock { $0.last?.image } }
            func display(_ image: Image?) {
                let loading = imageBinding.isLoading
                let first = seen.withLock { seen -> Bool in
                    seen.append((image, loading))
                    return seen.count == 2
                }
                if first, image != nil, !loading { mg.setImage(with: next) }
            }
        }
        /// An indicator that reads its target's binding on every call.
        final class ReentrantIndicator: Indicator {
            let binding: ImageBinding
            let calls = Mutex<[String]>([])
            init(binding: ImageBinding) { self.binding = binding }
            func startAnimating() { calls.withLock { $0.append("start \(binding.isLoading)") } }
            func stopAnimating() { calls.withLock { $0.append("stop \(binding.isLoading)") } }
        }
        let fixture = try await Fixture.start()
        let target = ReentrantTarget(next: fixture.url("/img/photo.jpg"))
        target.mg.manager = fixture.manager
        let indicator = ReentrantIndicator(binding: target.imageBinding)
        target.mg.indicator = indicator
        let task = try #require(target.mg.setImage(with: fixture.url("/img/pic.png"), placeholder: Self.placeholder))
        await task.wait()
        // The display of pic.png started photo.jpg from inside display; wait for that one too.
        try await pollUntil { target.seen.withLock { $0.count } == 4 && !target.imageBinding.isLoading }
        let seen = target.seen.withLock { $0 }
        #expect(seen[0].image == Self.placeholder && seen[0].loading)
        #expect(Self.isPic(seen[1].image) && !seen[1].loading)
        #expect(seen[2].image == nil)  // photo.jpg's request clears the target (no placeholder)
        #expect(seen[3].image?.pixelSize == PixelSize(width: 80, height: 60))
        #expect(indicator.calls.withLock { $0 } == ["start true", "stop false", "start true", "stop false"])
        try await fixture.stop()
    }

    @Test func aNewTargetUsesTheSharedManagerAndHasNoRequest() {
        let target = HeadlessImageTarget()
        #expect(target.mg.manager === ImageManager.shared)
        #expect(target.mg.taskIdentifier == nil)
        #expect(target.mg.sourceURL == nil)
        #expect(target.mg.indicator == nil)
        #expect(target.displayedImage == nil)
        #expect(target.displayHistory.isEmpty)
    }

    @Test func headlessTargetKeepsTheLastHundredDisplays() throws {
        let target = HeadlessImageTarget()
        let images = try (1...150).map { Image(pixels: try PixelBuffer(width: $0, height: 1, fill: .clear)) }
        for image in images { target.display(image) }
        #expect(target.displayHistory.count == HeadlessImageTarget.historyLimit)
        #expect(target.displayHistory.first == images[50])
        #expect(target.displayedImage == images[149])
    }
}

/// Every completion a test's requests received.
private final class Completions: Sendable {
    private let results = Mutex<[Result<RetrieveImageResult, MagpieError>]>([])

    var handler: @Sendable (Result<RetrieveImageResult, MagpieError>) -> Void {
        { [self] result in results.withLock { $0.append(result) } }
    }

    var all: [Result<RetrieveImageResult, MagpieError>] { results.withLock { $0 } }
    var count: Int { results.withLock { $0.count } }

    /// The one completion; fails the test when there were none or several.
    func single() throws -> Result<RetrieveImageResult, MagpieError> {
        let all = all
        try #require(all.count == 1, "expected exactly one completion, got \(all.count)")
        return all[0]
    }
}

/// Values appended from concurrent callbacks.
private final class Recorded<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// An indicator that logs what it was told.
private final class RecordingIndicator: Indicator {
    enum Event: Equatable { case start, stop, progress(Int) }
    private let log = Mutex<[Event]>([])

    func startAnimating() { log.withLock { $0.append(.start) } }
    func stopAnimating() { log.withLock { $0.append(.stop) } }
    func update(progress: DownloadProgress) { log.withLock { $0.append(.progress(progress.receivedBytes)) } }

    var events: [Event] { log.withLock { $0 } }
    var starts: Int { events.filter { $0 == .start }.count }
    var stops: Int { events.filter { $0 == .stop }.count }
}

/// Polls `condition` until it holds, for up to a minute (generous: the machine may be busy).
private func pollUntil(_ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition(), ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(10))
    }
    try #require(condition())
}
