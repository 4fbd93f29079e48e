import Foundation
import MagpieOrigin
import Synchronization
import Testing

@testable import Magpie
@testable import MagpieCore

/// The error `body` throws as a `MagpieError` (nil when it succeeds or throws something else).
func magpieError(_ body: () async throws -> Any) async -> MagpieError? {
    do {
        _ = try await body()
        return nil
    } catch let error as MagpieError {
        return error
    } catch {
        return nil
    }
}

/// Collects values from concurrent callbacks.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

@Suite("ImageDownloader: downloads, dedupe, progress, cancellation")
struct ImageDownloaderTests {
    @Test func downloadsAndDecodesAnImageWithResponseMetadata() async throws {
        let origin = try await OriginFixture.start()
        let downloader = ImageDownloader(name: "basic")
        let result = try await downloader.downloadImage(with: URL(string: origin.url("/img/pic.png"))!)
        #expect(result.image.pixelSize == PixelSize(width: 64, height: 48))
        #expect(result.originalData == OriginFixture.png)
        #expect(result.response?.statusCode == 200)
        #expect(result.response?.contentType == "image/png")
        #expect(result.metrics.bytesReceived == OriginFixture.png.count)
        #expect(result.metrics.total >= result.metrics.timeToFirstByte)
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func twoHundredConcurrentCallersShareOneRequest() async throws {
        let origin = try await OriginFixture.start()
        let downloader = ImageDownloader(name: "dedupe")
        // A slow body keeps the exchange open while every caller joins it.
        let url = URL(string: origin.url("/slow/noise.png?chunk=32768&delay=40"))!
        let sizes = try await withThrowingTaskGroup(of: PixelSize.self) { group in
            for _ in 0..<200 {
                group.addTask { try await downloader.downloadImage(with: url).image.pixelSize }
            }
            return try await group.reduce(into: [PixelSize]()) { $0.append($1) }
        }
        #expect(sizes.count == 200)
        #expect(sizes.allSatisfy { $0 == PixelSize(width: 256, height: 256) })
        #expect(origin.requestCount(path: "/slow/noise.png") == 1)
        #expect(downloader.statistics.dedupeHits == 199)
        #expect(downloader.statistics.requestsSent == 1)
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func differentRequestHeadersAreNotDeduplicated() async throws {
        let origin = try await OriginFixture.start()
        let downloader = ImageDownloader(name: "dedupe-headers")
        let url = URL(string: origin.url("/slow/pic.png?chunk=1024&delay=30"))!
        async let a = downloader.downloadData(with: url, options: ImageDownloadOptions(requestModifier: AnyModifier {
            var request = $0
            request.setValue("Bearer a", forHeader: "Authorization")
            return request
        }))
        async let b = downloader.downloadData(with: url, options: ImageDownloadOptions(requestModifier: AnyModifier {
            var request = $0
            request.setValue("Bearer b", forHeader: "Authorization")
            return request
        }))
        _ = try await (a, b)
        #expect(origin.requestCount(path: "/slow/pic.png") == 2)
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func cancellingOneCallerLeavesTheOthersRunning() async throws {
        let origin = try await OriginFixture.start()
        let downloader = ImageDownloader(name: "cancel-one")
        let url = URL(string: origin.url("/slow/noise.png?chunk=16384&delay=30"))!
        let survivors = (0..<3).map { _ in Task { try await downloader.downloadImage(with: url) } }
        let victim = Task { try await downloader.downloadImage(with: url) }
        try await Task.sleep(for: .milliseconds(100))
        victim.cancel()
        let error = await magpieError { try await victim.value }
        #expect(error?.isCancellation == true)
        for task in survivors {
            #expect(try await task.value.image.pixelSize == PixelSize(width: 256, height: 256))
        }
        #expect(origin.requestCount(path: "/slow/noise.png") == 1)
        #expect(downloader.statistics.cancelled == 0)
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func cancellingEveryCallerCancelsTheExchange() async throws {
        let origin = try await OriginFixture.start()
        let downloader = ImageDownloader(name: "cancel-all")
        let url = URL(string: origin.url("/stall/noise.png?after=1000"))!
        let tasks = (0..<2).map { _ in Task { try await downloader.downloadData(with: url) } }
        // Cancel only once the request is on the wire (a loaded machine may take a while to get there).
        for _ in 0..<500 where origin.requestCount(path: "/stall/noise.png") == 0 { try await Task.sleep(for: .milliseconds(20)) }
        let started = ContinuousClock.now
        tasks.forEach { $0.cancel() }
        for task in tasks {
            let error = await magpieError { try await task.value }
            #expect(error?.isCancellation == true)
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        // The exchange itself ends as cancelled, and a new caller starts a new request.
        // Polls rather than sleeps a fixed time: a loaded machine may take a while.
        for _ in 0..<500 where downloader.statistics.cancelled == 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(downloader.statistics.cancelled == 1)
        let again = Task { try await downloader.downloadData(with: url) }
        for _ in 0..<500 where downloader.statistics.requestsSent < 2 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(downloader.statistics.requestsSent == 2)
        again.cancel()
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func progressReportsReceivedAndExpectedBytesUpToTheTotal() async throws {
        let origin = try await OriginFixture.start()
        var configuration = ImageDownloader.Configuration()
        configuration.progressInterval = .milliseconds(1)
        let downloader = ImageDownloader(name: "progress", configuration: configuration)
        let reports = Recorder<DownloadProgress>()
        let url = URL(string: origin.url("/slow/noise.png?chunk=32768&delay=20"))!
        _ = try await downloader.downloadData(with: url) { reports.append($0) }
        let all = reports.all
        #expect(all.count >= 3)
        #expect(all.last?.receivedBytes == OriginFixture.noisePNG.count)
        #expect(all.allSatisfy { $0.expectedBytes == OriginFixture.noisePNG.count })
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.receivedBytes <= $1.receivedBytes })
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func progressIsThrottledButTheLastChunkIsAlwaysReported() async throws {
        let origin = try await OriginFixture.start()
        var configuration = ImageDownloader.Configuration()
        configuration.progressInterval = .seconds(10)
        let downloader = ImageDownloader(name: "throttle", configuration: configuration)
        let reports = Recorder<DownloadProgress>()
        let url = URL(string: origin.url("/slow/noise.png?chunk=8192&delay=2"))!
        _ = try await downloader.downloadData(with: url) { reports.append($0) }
        // First chunk, then nothing for 10 s, then the final report.
        #expect(reports.all.count == 2)
        #expect(reports.all.last?.receivedBytes == OriginFixture.noisePNG.count)
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func completionHandlerIsCalledOnceAndCancelAnswersCancelled() async throws {
        let origin = try await OriginFixture.start()
        let downloader = ImageDownloader(name: "completion")
        let results = Recorder<Result<ImageLoadingResult, MagpieError>>()
        let done = downloader.downloadImage(with: URL(string: origin.url("/img/photo.jpg"))!) { results.append($0) }
        await done.wait()
        #expect(results.all.count == 1)
        #expect((try? results.all.first?.get().image.pixelSize) == PixelSize(width: 80, height: 60))

        let cancelled = Recorder<Result<ImageLoadingResult, MagpieError>>()
        let task = downloader.downloadImage(with: URL(string: origin.url("/stall/photo.jpg"))!) { cancelled.append($0) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        task.cancel()
        await task.wait()
        #expect(cancelled.all.count == 1)
        if case .failure(let error) = cancelled.all.first { #expect(error.isCancellation) } else { Issue.record("expected cancellation") }
        try await downloader.shutdown()
        await origin.stop()
    }

    @Test func fileAndDataURLsAreReadWithoutHTTP() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-dl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("pic.png")
        try OriginFixture.png.write(to: file)
        let downloader = ImageDownloader(name: "local")
        let fromFile = try await downloader.downloadImage(with: file)
        #expect(fromFile.image.pixelSize == PixelSize(width: 64, height: 48))
        #expect(fromFile.response == nil)
        let dataURL = URL(string: "data:image/png;base64," + OriginFixture.png.base64EncodedString())!
        #expect(try await downloader.downloadImage(with: dataURL).image.pixelSize == PixelSize(width: 64, height: 48))
        #expect(downloader.statistics.requestsSent == 0)
        try await downloader.shutdown()
    }

    @Test func delegateSeesSendResponseAndFinishOncePerExchange() async throws {
        final class Events: ImageDownloaderDelegate {
            let log = Recorder<String>()
            func imageDownloader(_ downloader: ImageDownloader, willSend request: ImageRequest) { log.append("send \(request.url.path)") }
            func imageDownloader(_ downloader: ImageDownloader, didReceive response: HTTPResponseInfo) { log.append("response \(response.statusCode)") }
            func imageDownloader(_ downloader: ImageDownloader, didFinish url: URL, result: Result<ImageDataResult, MagpieError>, metrics: DownloadMetrics) {
                log.append("finish \((try? result.get().data.count) ?? -1)")
            }
        }
        let origin = try await OriginFixture.start()
        let downloader = ImageDownloader(name: "delegate")
        let events = Events()
        downloader.delegate = events
        _ = try await downloader.downloadData(with: URL(string: origin.url("/redirect/1/pic.png"))!)
        #expect(events.log.all == [
            "send /redirect/1/pic.png", "response 302", "send /redirect/0/pic.png", "response 200",
            "finish \(OriginFixture.png.count)",
        ])
        try await downloader.shutdown()
        await origin.stop()
    }
}

import CoreMetrics
import MetricsTestKit

extension ImageDownloaderTests {
    @Test func requestsResponsesBytesAndDedupeHitsAreReportedAsMetrics() async throws {
        let origin = try await OriginFixture.start()
        let metrics = TestMetrics()
        let downloader = withMetricsFactory(metrics) { ImageDownloader(name: "metered") }
        let url = URL(string: origin.url("/slow/pic.png?chunk=512&delay=20"))!
        async let a = downloader.downloadData(with: url)
        async let b = downloader.downloadData(with: url)
        _ = try await (a, b)
        _ = await magpieError { try await downloader.downloadData(with: URL(string: origin.url("/status/404"))!) }
        let dims = [("downloader", "metered")]
        #expect(try metrics.expectCounter("magpie_download_requests_total", dims).totalValue == 2)
        #expect(try metrics.expectCounter("magpie_download_dedupe_hits_total", dims).totalValue == 1)
        #expect(try metrics.expectCounter("magpie_download_bytes_total", dims).totalValue == Int64(OriginFixture.png.count))
        #expect(try metrics.expectCounter("magpie_download_failures_total", dims).totalValue == 1)
        #expect(try metrics.expectCounter("magpie_download_responses_total", dims + [("status", "2xx")]).totalValue == 1)
        #expect(try metrics.expectCounter("magpie_download_responses_total", dims + [("status", "4xx")]).totalValue == 1)
        #expect(try metrics.expectTimer("magpie_download_duration", dims).values.count == 1)
        try await downloader.shutdown()
        await origin.stop()
    }
}
